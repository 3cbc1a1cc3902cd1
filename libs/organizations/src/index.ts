export * from './domain/organization.events';
export * from './domain/organization.decider';
export * from './application/organization.commands';
export * from './application/organization-directory';
export * from './application/api-keys';
export * from './projections/organizations.projection';
export * from './organizations.module';
