import { Global, Module } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@lib/shared';
import { loadPreviousSigningSecretKeys, loadSigningSecretKey, SigningSecretSeal } from './application/signing-secret-seal';

/**
 * The seal of the webhook signing secrets, one per process: the gateway seals the secrets it
 * mints with the current key, the outbox (WebhookOrganizations) opens them to sign with the
 * current key or one it replaced (SIGNING_SECRET_PREVIOUS_KEYS, read as SIGNING_SECRET_KEY is).
 * Global, so that webhook delivery reaches it without importing the organizations' controllers.
 */
@Global()
@Module({
  providers: [
    {
      provide: SigningSecretSeal,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) =>
        new SigningSecretSeal(
          loadSigningSecretKey({ SIGNING_SECRET_KEY: config.signingSecretKey }, config.dataDir),
          loadPreviousSigningSecretKeys({ SIGNING_SECRET_KEY: config.signingSecretKey, previousKeys: config.signingSecretPreviousKeys }, config.dataDir),
        ),
    },
  ],
  exports: [SigningSecretSeal],
})
export class SigningSecretsModule {}
