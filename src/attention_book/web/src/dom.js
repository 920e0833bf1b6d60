// Building elements: attributes set one by one and text through textContent (reader text is
// never parsed as HTML).

/**
 * A new element.
 * @param {string} tag
 * @param {Object<string, string|number>} [attrs] attributes
 * @param {string} [textContent]
 * @returns {HTMLElement}
 */
export function make(tag, attrs = {}, textContent = undefined) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) { el.setAttribute(k, v); }
  if (textContent !== undefined) { el.textContent = textContent; }
  return el;
}
