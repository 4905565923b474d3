// ESLint's flat config for ai_chat's JavaScript: the chat page's script (a classic
// browser script in ai_chat/server/static/) and the Node scripts in tests/js.
//
// tests/browser/test_page_files.py runs it from the repository root (with --config,
// the patterns below are relative to the working directory):
//   node tests/js/node_modules/eslint/bin/eslint.js --config tests/js/eslint.config.js \
//     --max-warnings 0 ai_chat/server/static tests/js

import js from "@eslint/js";
import globals from "globals";

const rules = {
  ...js.configs.recommended.rules,
  eqeqeq: "error",
  "no-var": "error",
  "prefer-const": "error",
  "no-throw-literal": "error",
  "no-unused-vars": ["error", { ignoreRestSiblings: true }],
};
const linterOptions = { reportUnusedDisableDirectives: "error" };

export default [
  {
    files: ["ai_chat/server/static/**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "script", globals: globals.browser },
    linterOptions,
    rules: { ...rules, strict: ["error", "global"], "no-shadow": "error" },
  },
  {
    files: ["tests/js/**/*.mjs", "tests/js/**/*.js"],
    languageOptions: { ecmaVersion: "latest", sourceType: "module", globals: globals.node },
    linterOptions,
    rules,
  },
  {
    // The browser driver's page.evaluate() callbacks run in the page.
    files: ["tests/js/browser_chat.mjs"],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
  },
];
