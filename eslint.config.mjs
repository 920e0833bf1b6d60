// eslint (pinned in package.json; `make lint`, run by `make test`): one dialect for every
// JavaScript file we write: ES modules, const, arrows, named imports; formatting by
// @stylistic's rules (eslint --fix applies them). The generated bundles and tables are not
// ours to format.
import js from "@eslint/js";
import stylistic from "@stylistic/eslint-plugin";
import globals from "globals";

export default [
  {
    ignores: [
      "node_modules/", "_build/", ".venv/",
      "src/attention_book/web/*.js", "src/attention_book/web/*.mjs",  // the bundles (make js)
      "!src/attention_book/web/build.mjs",
      "src/attention_book/web/src/shared/{vocab,rng-tables,bert-tables}.js",  // generated tables
      "src/attention_book/web/src/llama/wasm-bytes.js",  // the kernels compiled (make js)
      "src/attention_book/web/src/labs/scaling/table.js",
    ],
  },
  js.configs.recommended,
  {
    files: ["**/*.js", "**/*.mjs", "**/*.cjs"],
    plugins: {"@stylistic": stylistic},
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: {...globals.browser, ...globals.node},
    },
    linterOptions: {reportUnusedDisableDirectives: "error"},
    rules: {
      "no-var": "error",
      "prefer-const": ["error", {destructuring: "all"}],
      "prefer-arrow-callback": "error",
      "object-shorthand": ["error", "always"],
      "no-shadow": ["error", {builtinGlobals: false}],
      "no-unused-vars": ["error", {args: "after-used", argsIgnorePattern: "^_", caughtErrors: "none"}],
      "eqeqeq": ["error", "always", {null: "ignore"}],
      "@stylistic/indent": ["error", 2, {SwitchCase: 1, flatTernaryExpressions: true,
        ignoredNodes: ["ConditionalExpression"]}],
      "@stylistic/quotes": ["error", "double", {avoidEscape: true}],
      "@stylistic/semi": ["error", "always"],
      "@stylistic/max-len": ["error", {code: 120, ignoreUrls: true, ignoreRegExpLiterals: true, ignoreStrings: true}],
      "@stylistic/comma-spacing": "error",
      "@stylistic/keyword-spacing": "error",
      "@stylistic/space-before-blocks": "error",
      "@stylistic/space-infix-ops": "error",
      "@stylistic/arrow-parens": ["error", "always"],
      "@stylistic/arrow-spacing": "error",
      "@stylistic/no-trailing-spaces": "error",
      "@stylistic/eol-last": "error",
      "@stylistic/no-multiple-empty-lines": ["error", {max: 1}],
      "@stylistic/brace-style": ["error", "1tbs", {allowSingleLine: true}],
    },
  },
  {files: ["**/*.cjs"], languageOptions: {sourceType: "commonjs"}},
];
