export * from './domain/lead.events';
export * from './domain/lead.decider';
export * from './domain/lead.errors';
export * from './application/lead.commands';
export * from './application/lead-directory';
export * from './projections/leads.projection';
export * from './leads.module';
