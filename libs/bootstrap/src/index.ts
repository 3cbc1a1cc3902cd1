export * from './domain.module';
export * from './prepare-runtime';
