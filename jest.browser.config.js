/**
 * Browser tests (*.browser-spec.ts): the customer pages in Debian's Chromium (/usr/bin/chromium)
 * driven by playwright-core. `npm run test:browser` runs them; `npm test` never does.
 */
const base = require('./jest.config');

module.exports = {
  ...base,
  testMatch: ['<rootDir>/test/browser/**/*.browser-spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testTimeout: 60000,
};
