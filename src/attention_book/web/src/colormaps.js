// Colour maps: matplotlib's at 256 levels (tests/test_web_lab.py checks them), readable with
// colour-blindness. The labs' colour language (docs/architecture.md) uses two:
//   viridis  every weight and every other quantity that is 0 or more (a weight, a mask's
//            share, a difference, a norm), 0 dark, large bright: one sequential map;
//   RdBu_r   every signed quantity (an embedding, a score, a cosine, PE, an output), centred
//            on 0 (white), negative blue, positive red: one diverging map, its scale symmetric.
// Neither holds a neutral grey, the colour reserved for masked cells (panels/style.js).
// Each map is kept as a hex string (three bytes a level) and unpacked once into a table.

/** Each map's 256 RGB levels as hex, darkest first. */
export const LUT_HEX = {
  viridis: "44015444025645045745055946075a46085c460a5d460b5e470d60470e6147106347116447136548146748166848176948186a481a6c481b6d481c6e481d6f481f70482071482173482374482475482576482677482878482979472a7a472c7a472d7b472e7c472f7d46307e46327e46337f463480453581453781453882443983443a83443b84433d84433e85423f854240864241864142874144874045884046883f47883f48893e49893e4a893e4c8a3d4d8a3d4e8a3c4f8a3c508b3b518b3b528b3a538b3a548c39558c39568c38588c38598c375a8c375b8d365c8d365d8d355e8d355f8d34608d34618d33628d33638d32648e32658e31668e31678e31688e30698e306a8e2f6b8e2f6c8e2e6d8e2e6e8e2e6f8e2d708e2d718e2c718e2c728e2c738e2b748e2b758e2a768e2a778e2a788e29798e297a8e297b8e287c8e287d8e277e8e277f8e27808e26818e26828e26828e25838e25848e25858e24868e24878e23888e23898e238a8d228b8d228c8d228d8d218e8d218f8d21908d21918c20928c20928c20938c1f948c1f958b1f968b1f978b1f988b1f998a1f9a8a1e9b8a1e9c891e9d891f9e891f9f881fa0881fa1881fa1871fa28720a38620a48621a58521a68522a78522a88423a98324aa8325ab8225ac8226ad8127ad8128ae8029af7f2ab07f2cb17e2db27d2eb37c2fb47c31b57b32b67a34b67935b77937b87838b9773aba763bbb753dbc743fbc7340bd7242be7144bf7046c06f48c16e4ac16d4cc26c4ec36b50c46a52c56954c56856c66758c7655ac8645cc8635ec96260ca6063cb5f65cb5e67cc5c69cd5b6ccd5a6ece5870cf5773d05675d05477d1537ad1517cd2507fd34e81d34d84d44b86d54989d5488bd6468ed64590d74393d74195d84098d83e9bd93c9dd93ba0da39a2da37a5db36a8db34aadc32addc30b0dd2fb2dd2db5de2bb8de29bade28bddf26c0df25c2df23c5e021c8e020cae11fcde11dd0e11cd2e21bd5e21ad8e219dae319dde318dfe318e2e418e5e419e7e419eae51aece51befe51cf1e51df4e61ef6e620f8e621fbe723fde725",
  RdBu_r: "05306106326407346708366a09386d0a3b700c3d730d3f760e41790f437b10457e114781124984134c87144e8a15508d1752901854931956961a58991b5a9c1c5c9f1d5fa21e61a51f63a82065ab2267ac2369ad246aae266caf276eb02870b12a71b22b73b32c75b42e77b52f79b5307ab6327cb7337eb83480b93681ba3783bb3885bc3a87bd3b88be3c8abe3e8cbf3f8ec0408fc14291c24393c34695c44997c54c99c64f9bc7529dc8569fc959a1ca5ca3cb5fa5cd62a7ce65a9cf68abd06bacd16eaed271b0d375b2d478b4d57bb6d67eb8d781bad884bcd987beda8ac0db8dc2dc90c4dd93c6de96c7df98c8e09bc9e09dcbe1a0cce2a2cde3a5cee3a7d0e4a9d1e5acd2e5aed3e6b1d5e7b3d6e8b6d7e8b8d8e9bbdaeabddbeac0dcebc2ddecc5dfecc7e0edcae1eecce2efcfe4efd1e5f0d2e6f0d4e6f1d5e7f1d7e8f1d8e9f1dae9f2dbeaf2ddebf2deebf2e0ecf3e1edf3e3edf3e4eef4e6eff4e7f0f4e9f0f4eaf1f5ecf2f5edf2f5eff3f5f0f4f6f2f5f6f3f5f6f5f6f7f6f7f7f7f6f6f7f5f4f8f4f2f8f3f0f8f2eff8f1edf9f0ebf9efe9f9eee7f9ede5f9ebe3faeae1fae9dffae8defae7dcfbe6dafbe5d8fbe4d6fbe3d4fce2d2fce0d0fcdfcffcdecdfdddcbfddcc9fddbc7fdd9c4fcd7c2fcd5bffcd3bcfbd0b9fbceb7fbccb4facab1fac8aff9c6acf9c4a9f9c2a7f8bfa4f8bda1f8bb9ef7b99cf7b799f7b596f6b394f6b191f6af8ef5ac8bf5aa89f5a886f4a683f3a481f2a17ff19e7df09c7bef9979ee9677ec9374eb9172ea8e70e98b6ee8896ce6866ae58368e48066e37e64e27b62e17860df765ede735cdd7059dc6e57db6b55da6853d86551d7634fd6604dd55d4cd35a4ad25849d05548cf5246ce4f45cc4c44cb4942c94741c84440c6413ec53e3dc43b3cc2383ac13639bf3338be3036bd2d35bb2a34ba2832b82531b72230b61f2eb41c2db3192cb1182bae172aab162aa81529a51429a213289f12289c1127991027960f27930e26900d268d0c258a0b25870a248409248108237f08237c07227906227605217304217003206d02206a011f67001f",
};

const tables = new Map();

/**
 * A colour map's lookup table: 256 levels of R, G, B bytes (768 bytes), darkest first.
 * @param {string} name "viridis" or "RdBu_r"
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
