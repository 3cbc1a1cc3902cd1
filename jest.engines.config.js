/**
 * Suites against real servers (*.engine-spec.ts). `npm run test:engines` starts the servers,
 * sets EVENTSTORE_URL / MONGODB_URL / KAFKA_BROKERS and runs them; `npm test` never does.
 */
const base = require('./jest.config');

module.exports = {
  ...base,
  testMatch: ['<rootDir>/{apps,libs,test}/**/*.engine-spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  testTimeout: 60000,
};
