export * from './domain/session.events';
export * from './domain/session.decider';
export * from './domain/session.errors';
export * from './application/customer-token';
export * from './application/session.commands';
export * from './application/session-reader';
export * from './projections/sessions.projection';
export * from './sessions.module';
