import { APP_CONFIG, type AppConfig } from '@lib/shared';
import { Global, Module, OnModuleInit } from '@nestjs/common';
import { ReactorRegistry } from '@lib/runtime';
import { DeliverySignal } from './application/delivery-signal';
import { DeliveryStore } from './application/delivery-store';
import { WebhookDeliveries } from './application/webhook-deliveries';
import { WebhookDeliveryReactor } from './application/webhook-delivery.reactor';
import { WebhookDispatcher } from './application/webhook-dispatcher';
import { WebhookOrganizations } from './application/webhook-organizations';
import { StoredCapabilitySweep } from './application/stored-capability-sweep';
import { EventsController } from './http/events.controller';
import { PayloadFinalizerRegistry, WebhookSourceRegistry } from './registries';
import { LeadWebhookSource } from './sources/lead.source';
import { QuoteLinkFinalizer } from './sources/quote-link.finalizer';
import { QuoteWebhookSource } from './sources/quote.source';
import { SubmissionWebhookSource } from './sources/submission.source';
import { NodeWebhookSender, WebhookSender } from './transport/webhook-sender';
import { webhookDispatchSettings, WEBHOOK_DISPATCH_SETTINGS } from './webhook-settings';

/**
 * Webhooks: the registries other libraries extend (global, so any module can inject them), the
 * reactor that turns domain events into delivery records (it runs where reactors run: the
 * outbox), and the external API over the delivery log. Sending is WebhookDispatchModule's job.
 */
@Global()
@Module({
  controllers: [EventsController],
  providers: [
    WebhookSourceRegistry,
    PayloadFinalizerRegistry,
    DeliveryStore,
    DeliverySignal,
    WebhookOrganizations,
    WebhookDeliveries,
    WebhookDeliveryReactor,
    SubmissionWebhookSource,
    QuoteWebhookSource,
    QuoteLinkFinalizer,
    LeadWebhookSource,
    { provide: WEBHOOK_DISPATCH_SETTINGS, inject: [APP_CONFIG], useFactory: (config: AppConfig) => webhookDispatchSettings(config) },
  ],
  exports: [WebhookSourceRegistry, PayloadFinalizerRegistry, WebhookDeliveries, DeliveryStore, DeliverySignal, WebhookOrganizations, WEBHOOK_DISPATCH_SETTINGS],
})
export class WebhooksModule implements OnModuleInit {
  constructor(
    private readonly store: DeliveryStore,
    reactors: ReactorRegistry,
    reactor: WebhookDeliveryReactor,
    sources: WebhookSourceRegistry,
    finalizers: PayloadFinalizerRegistry,
    submissions: SubmissionWebhookSource,
    quotes: QuoteWebhookSource,
    quoteLinks: QuoteLinkFinalizer,
    leads: LeadWebhookSource,
  ) {
    sources.register(submissions, quotes, leads);
    finalizers.register(quoteLinks);
    reactors.register(reactor);
  }

  async onModuleInit(): Promise<void> {
    await this.store.ensureIndexes();
  }
}

/**
 * The dispatcher that sends deliveries. Imported by the outbox process only, so deliveries are
 * sent from exactly one place per deployment.
 */
@Module({
  providers: [WebhookDispatcher, StoredCapabilitySweep, { provide: WebhookSender, useFactory: () => new NodeWebhookSender() }],
  exports: [WebhookDispatcher],
})
export class WebhookDispatchModule {}
