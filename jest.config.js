/** Unit (*.spec.ts), integration (*.int-spec.ts) and HTTP (*.e2e-spec.ts) tiers, compiled with swc. */
const swc = ['@swc/jest', {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
    target: 'es2022',
  },
  module: { type: 'commonjs' },
}];

module.exports = {
  rootDir: '.',
  testEnvironment: 'node',
  testMatch: ['<rootDir>/{apps,libs,test}/**/*.{spec,int-spec,e2e-spec}.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '\\.engines\\.'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: { '^@lib/([^/]+)$': '<rootDir>/libs/$1/src', '^@lib/([^/]+)/(.*)$': '<rootDir>/libs/$1/src/$2' },
  setupFiles: ['reflect-metadata'],
  testTimeout: 20000,
  reporters: ['default', '<rootDir>/test/support/tally-reporter.js'],
};
