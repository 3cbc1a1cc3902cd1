export * from './decider';
export * from './upcasting';
export * from './aggregate-repository';
export * from './projection';
export * from './projection-runner';
export * from './read-your-writes';
export * from './active-projections';
export * from './projection-rebuild';
