// Python's messages, as the labs' twins raise them: repr and whole-number checks
// (attention_book._validate).

const NOT_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

function hex(c, width) {
  let s = c.toString(16);
  while (s.length < width) { s = "0" + s; }
  return s;
}

/** Python's repr(value) of what a control or a text may hold: None, True/False, a str
 *  (the quotes Python picks, its escapes of what str.isprintable refuses), a list, a
 *  number (a float's exponent written with two digits, as 1e-07). */
function pyRepr(v) {
  if (v === null || v === undefined) { return "None"; }
  if (typeof v === "boolean") { return v ? "True" : "False"; }
  if (Array.isArray(v)) { return "[" + v.map(pyRepr).join(", ") + "]"; }
  if (typeof v === "number") {
    if (v !== v) { return "nan"; }
    if (!isFinite(v)) { return v > 0 ? "inf" : "-inf"; }
    return String(v).replace(/e([+-])(\d)$/, "e$10$2");
  }
  if (typeof v !== "string") { return String(v); }
  const quote = v.indexOf("'") >= 0 && v.indexOf('"') < 0 ? '"' : "'"; let out = quote;
  for (const ch of v) {
    const c = ch.codePointAt(0);
    if (ch === quote || ch === "\\") { out += "\\" + ch; } else if (ch === "\t") { out += "\\t"; } else if (ch === "\n") { out += "\\n"; } else if (ch === "\r") { out += "\\r"; } else if (c < 0x20 || c === 0x7f) { out += "\\x" + hex(c, 2); } else if (c < 0x7f || (c !== 0x20 && !NOT_PRINTABLE.test(ch))) { out += ch; } else if (c <= 0xff) { out += "\\x" + hex(c, 2); } else if (c <= 0xffff) { out += "\\u" + hex(c, 4); } else { out += "\\U" + hex(c, 8); }
  }
  return out + quote;
}

/** _validate.positive_int(value, name): the value, or Python's message. */
function positiveInt(value, name) {
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw new Error(name + " must be a whole number, got " + pyRepr(value));
  }
  if (value < 1) { throw new Error(name + " must be at least 1, got " + value); }
  return value;
}

/** _validate.whole_number(value, name, low, high): the value, or Python's message. */
function wholeNumber(value, name, low, high) {
  const bounds = high === undefined ? " >= " + low : " in " + low + ".." + high;
  if (typeof value !== "number" || !Number.isInteger(value) || value < low ||
      (high !== undefined && value > high)) {
    throw new Error(name + " must be a whole number" + bounds + ", got " + pyRepr(value));
  }
  return value;
}

export {pyRepr, positiveInt, wholeNumber};
