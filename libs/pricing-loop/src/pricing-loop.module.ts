import { Module } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { BeforeBodyChecks } from '@lib/http';
import { OrganizationsModule } from '@lib/organizations';
import { ProjectionRegistry } from '@lib/runtime';
import { SessionsModule } from '@lib/sessions';
import { APP_CONFIG, type AppConfig } from '@lib/shared';
import { PayloadFinalizerRegistry, WebhookSourceRegistry } from '@lib/webhooks';
import { ConfigurationSessionAccess } from './application/configuration-session-access';
import { PricingCallbackFinalizer } from './application/pricing-callback.finalizer';
import { loadPricingTokenKey } from './application/pricing-token-key';
import { PricingWebhookSource } from './application/pricing-webhook.source';
import { CapabilityTokens } from './domain/capability-token';
import { ADJUSTMENTS_ROUTE, ConfigurationSessionsController } from './http/configuration-sessions.controller';
import { pricingGrantsProjection } from './projections/pricing-grants.projection';

/**
 * The live-pricing loop (api-v1 pricing.calculated, decisions §8): the webhook source and the
 * callback finalizer the outbox runs, the capability-token grants projection, and the
 * configuration-session endpoints the external system answers through.
 */
@Module({
  imports: [OrganizationsModule, SessionsModule],
  controllers: [ConfigurationSessionsController],
  providers: [
    { provide: CapabilityTokens, inject: [APP_CONFIG], useFactory: (config: AppConfig) => new CapabilityTokens(loadPricingTokenKey({ PRICING_TOKEN_SECRET: config.pricingTokenSecret }, config.dataDir)) },
    ConfigurationSessionAccess,
    PricingWebhookSource,
    PricingCallbackFinalizer,
  ],
})
export class PricingLoopModule {
  constructor(
    projections: ProjectionRegistry,
    sources: WebhookSourceRegistry,
    finalizers: PayloadFinalizerRegistry,
    source: PricingWebhookSource,
    finalizer: PricingCallbackFinalizer,
    beforeBody: BeforeBodyChecks,
    access: ConfigurationSessionAccess,
  ) {
    projections.register(pricingGrantsProjection);
    // decisions §8: the token, plan, session and window before the body
    beforeBody.register('PUT', ADJUSTMENTS_ROUTE, (request: FastifyRequest) => access.admitWrite(request, (request.params as { token: string }).token));
    sources.register(source);
    finalizers.register(finalizer);
  }
}
