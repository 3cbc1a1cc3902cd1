import { DomainError } from '@lib/shared';

/** api-v1: external pricing belongs to one configHash; a submission keeps only the one for its final configuration. */
export class ExternalPricingForAnotherConfiguration extends DomainError {
  readonly code = 'stale_config_hash';
  constructor(currentConfigHash: string) {
    super('The price was made for another configuration than the one submitted.', { currentConfigHash });
  }
}
