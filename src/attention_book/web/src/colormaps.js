// Colour maps: matplotlib's viridis and cividis at 256 levels (tests/test_web_lab.py checks
// them), perceptually uniform and readable with colour-blindness. Each map is kept as a
// hex string (three bytes a level) and unpacked once into a lookup table.

/** Each map's 256 RGB levels as hex, darkest first. */
export const LUT_HEX = {
  viridis: "44015444025645045745055946075a46085c460a5d460b5e470d60470e6147106347116447136548146748166848176948186a481a6c481b6d481c6e481d6f481f70482071482173482374482475482576482677482878482979472a7a472c7a472d7b472e7c472f7d46307e46327e46337f463480453581453781453882443983443a83443b84433d84433e85423f854240864241864142874144874045884046883f47883f48893e49893e4a893e4c8a3d4d8a3d4e8a3c4f8a3c508b3b518b3b528b3a538b3a548c39558c39568c38588c38598c375a8c375b8d365c8d365d8d355e8d355f8d34608d34618d33628d33638d32648e32658e31668e31678e31688e30698e306a8e2f6b8e2f6c8e2e6d8e2e6e8e2e6f8e2d708e2d718e2c718e2c728e2c738e2b748e2b758e2a768e2a778e2a788e29798e297a8e297b8e287c8e287d8e277e8e277f8e27808e26818e26828e26828e25838e25848e25858e24868e24878e23888e23898e238a8d228b8d228c8d228d8d218e8d218f8d21908d21918c20928c20928c20938c1f948c1f958b1f968b1f978b1f988b1f998a1f9a8a1e9b8a1e9c891e9d891f9e891f9f881fa0881fa1881fa1871fa28720a38620a48621a58521a68522a78522a88423a98324aa8325ab8225ac8226ad8127ad8128ae8029af7f2ab07f2cb17e2db27d2eb37c2fb47c31b57b32b67a34b67935b77937b87838b9773aba763bbb753dbc743fbc7340bd7242be7144bf7046c06f48c16e4ac16d4cc26c4ec36b50c46a52c56954c56856c66758c7655ac8645cc8635ec96260ca6063cb5f65cb5e67cc5c69cd5b6ccd5a6ece5870cf5773d05675d05477d1537ad1517cd2507fd34e81d34d84d44b86d54989d5488bd6468ed64590d74393d74195d84098d83e9bd93c9dd93ba0da39a2da37a5db36a8db34aadc32addc30b0dd2fb2dd2db5de2bb8de29bade28bddf26c0df25c2df23c5e021c8e020cae11fcde11dd0e11cd2e21bd5e21ad8e219dae319dde318dfe318e2e418e5e419e7e419eae51aece51befe51cf1e51df4e61ef6e620f8e621fbe723fde725",
  cividis: "00224e00234f00245100255300255400265600275800285900285b00295d002a5f002a61002b62002c64002c66002d68002e6a002e6c002f6d00306f0030700031700031710132710533710833700c34700f357012357014367016377018376f1a386f1c396f1e3a6f203a6f213b6e233c6e243c6e263d6e273e6e293f6e2a3f6d2b406d2d416d2e416d2f426d31436d32436d33446d34456c35456c36466c38476c39486c3a486c3b496c3c4a6c3d4a6c3e4b6c3f4c6c404c6c414d6c424e6c434e6c444f6c45506c46516c47516c48526c49536c4a536c4b546c4c556c4d556c4e566c4f576c50576c51586d52596d535a6d545a6d555b6d555c6d565c6d575d6d585e6d595e6e5a5f6e5b606e5c616e5d616e5e626e5e636f5f636f60646f61656f62656f636670646770656870656870666970676a71686a71696b716a6c716b6d726c6d726c6e726d6f726e6f736f70737071737172747272747273747374757474757575757676767777767777777878777979777a7a787b7a787c7b787d7c787e7c787e7d787f7e78807f78817f788280798381798482798582798683798784788885788985788a86788b87788c88788d88788e89788f8a78908b78918b78928c78928d78938e78948e77958f779690779791779892779992779a93769b94769c95769d95769e96769f9775a09875a19975a29975a39a74a49b74a59c74a69c74a79d73a89e73a99f73aaa073aba072aca172ada272aea371afa471b0a571b1a570b3a670b4a76fb5a86fb6a96fb7a96eb8aa6eb9ab6dbaac6dbbad6dbcae6cbdae6cbeaf6bbfb06bc0b16ac1b26ac2b369c3b369c4b468c5b568c6b667c7b767c8b866c9b965cbb965ccba64cdbb63cebc63cfbd62d0be62d1bf61d2c060d3c05fd4c15fd5c25ed6c35dd7c45cd9c55cdac65bdbc75adcc859ddc858dec958dfca57e0cb56e1cc55e2cd54e4ce53e5cf52e6d051e7d150e8d24fe9d34eead34cebd44bedd54aeed649efd748f0d846f1d945f2da44f3db42f5dc41f6dd3ff7de3ef8df3cf9e03afbe138fce236fde334fee434fee535fee636fee838",
};

const tables = new Map();

/**
 * A colour map's lookup table: 256 levels of R, G, B bytes (768 bytes), darkest first.
 * @param {string} name "viridis" or "cividis"
 * @returns {Uint8Array}
 */
export function lut(name) {
  if (!tables.has(name)) {
    const hex = LUT_HEX[name];
    if (!hex) { throw new Error("no colour map " + name); }
    const table = new Uint8Array(768);
    for (let i = 0; i < 768; i++) { table[i] = parseInt(hex.substr(2 * i, 2), 16); }
    tables.set(name, table);
  }
  return tables.get(name);
}

/**
 * Values through colour map `name` on [vmin, vmax] into RGBA pixels (NaN: the lowest level).
 * @param {ArrayLike<number>} values (rows*cols), row-major
 * @param {string} name the colour map
 * @param {number} vmin the value of the lowest level
 * @param {number} vmax the value of the highest level
 * @param {Uint8ClampedArray} out (4*rows*cols) an ImageData's data, filled and returned
 * @returns {Uint8ClampedArray}
 */
export function colorize(values, name, vmin, vmax, out) {
  const scale = 255 / (vmax - vmin), n = values.length, table = lut32(name);
  const pixels = new Uint32Array(out.buffer, out.byteOffset, n);  // one word a pixel
  for (let i = 0; i < n; i++) {
    // Math.round((v - vmin) * scale) within 0..255, NaN at 0 (false both ways), without a call
    const x = (values[i] - vmin) * scale;
    pixels[i] = table[x >= 254.5 ? 255 : x > 0 ? (x + 0.5) | 0 : 0];
  }
  return out;
}

const tables32 = new Map();

/** A colour map's 256 opaque pixels, each one 32-bit word: bytes R, G, B, 255 in memory
 *  order, whatever the platform's. */
function lut32(name) {
  if (!tables32.has(name)) {
    const table = lut(name), words = new Uint32Array(256), bytes = new Uint8Array(words.buffer);
    for (let k = 0; k < 256; k++) {
      bytes.set([table[3 * k], table[3 * k + 1], table[3 * k + 2], 255], 4 * k);
    }
    tables32.set(name, words);
  }
  return tables32.get(name);
}

/**
 * A map's colour at `level` (0..255) as CSS "rgb(r,g,b)".
 * @param {string} name the colour map
 * @param {number} level 0..255
 * @returns {string}
 */
export function rgb(name, level) {
  const table = lut(name);
  return `rgb(${table[3 * level]},${table[3 * level + 1]},${table[3 * level + 2]})`;
}
