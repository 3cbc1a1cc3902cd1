import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Logger } from 'pino';
import { CommandBus } from '@nestjs/cqrs';
import { createGatewayApp } from '../../apps/api-gateway/src/create-gateway';
import { CreateApiKey, CreateOrganization, UpdateOrganization, type CreatedApiKey, type CreatedOrganization, type OrganizationSettingsPatch, type Plan } from '@lib/organizations';
import { MongoClient } from 'mongodb';
import { ReadStore, SqliteReadStore } from '@lib/read-store';
import { MongoReadStore } from '@lib/read-store/mongo-read-store';
import { loadConfig, type AppConfig } from '@lib/shared';
import { engineEnv } from './engine-env';

export const ADMIN_TOKEN = 'adm_test_token_0123456789_padded_to_32_chars';

export interface TestResponse<T = any> {
  status: number;
  headers: Record<string, string | number | string[] | undefined>;
  body: T;
}

export interface RequestOptions {
  body?: unknown;
  /** raw payload (overrides body), for malformed-input tests */
  payload?: string | Buffer;
  headers?: Record<string, string>;
  /** API key, admin token or customer token sent as `Authorization: Bearer` */
  token?: string;
}


/** A connection of its own to the read models of an app's configuration, as another process would open it (the app may be stopped). */
export async function openReadStore(config: AppConfig): Promise<ReadStore> {
  return config.mongodbUrl ? MongoReadStore.connect({ url: config.mongodbUrl }) : new SqliteReadStore({ file: join(config.dataDir, 'read-models.db') });
}

/**
 * The whole product in one process on a fresh temporary DATA_DIR, driven over HTTP with
 * Fastify's injector (no socket). Rate limits are off unless a test sets them. With MONGODB_URL,
 * KAFKA_BROKERS or EVENTSTORE_URL in the environment it runs on those engines instead.
 */
export class TestApp {
  private constructor(
    readonly app: NestFastifyApplication,
    readonly config: AppConfig,
    private readonly dataDir: string,
    private readonly ownsDir: boolean,
  ) {}

  /** Set by listen(): requests then go over a real socket instead of the injector. */
  private baseUrl: string | null = null;

  /**
   * Listens on a free loopback port; request() then sends over it. Needed wherever the HTTP
   * server itself matters: requests answered before Fastify (EarlyListAnswers) never reach the
   * injector's path.
   */
  async listen(): Promise<string> {
    await this.app.listen(0, '127.0.0.1');
    const address = this.app.getHttpServer().address() as { port: number };
    this.baseUrl = `http://127.0.0.1:${address.port}`;
    return this.baseUrl;
  }

  /** Logs are off (LOG_LEVEL=silent) unless `env` sets a level; `logger` receives them instead of stdout. */
  static async start(env: Record<string, string> = {}, dataDir?: string, logger?: Logger): Promise<TestApp> {
    const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'quoting-test-'));
    const config = loadConfig({
      DATA_DIR: dir,
      ADMIN_TOKEN,
      SEED_DEMO: 'false',
      RATE_LIMIT_IP_PER_MIN: '0',
      RATE_LIMIT_KEY_PER_MIN: '0',
      RATE_LIMIT_CAPABILITY_PER_MIN: '0',
      PUBLIC_BASE_URL: 'http://localhost:3000',
      LOG_LEVEL: 'silent',
      ...engineEnv(dir),
      ...env,
    });
    const app = await createGatewayApp(config, { withWorkers: true }, logger);
    return new TestApp(app, config, dir, dataDir === undefined);
  }

  get<T = unknown>(type: abstract new (...args: any[]) => T): T {
    return this.app.get(type as any);
  }

  async request<T = any>(method: string, url: string, options: RequestOptions = {}): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let payload: string | Buffer | undefined = options.payload;
    if (payload === undefined && options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    if (this.baseUrl !== null) {
      const response = await fetch(this.baseUrl + url, { method, headers, body: payload });
      const text = await response.text();
      const type = response.headers.get('content-type') ?? '';
      return { status: response.status, headers: Object.fromEntries(response.headers), body: type.includes('json') && text ? JSON.parse(text) : text };
    }
    const response = await this.app.inject({ method: method as any, url, headers, payload });
    const type = String(response.headers['content-type'] ?? '');
    const body = type.includes('json') && response.body ? JSON.parse(response.body) : response.body;
    return { status: response.statusCode, headers: response.headers, body };
  }

  /**
   * Creates an organization with a full and a read-only key through the admin commands;
   * `signingSecret` is the secret its creation minted (settings with a webhook URL or live pricing), or null.
   */
  async createOrganization(options: { slug?: string; plan?: Plan; currency?: string; settings?: OrganizationSettingsPatch } = {}) {
    const commands = this.get(CommandBus);
    const slug = options.slug ?? `org-${Math.random().toString(36).slice(2, 10)}`;
    const { organizationId, mintedSigningSecret } = await commands.execute<CreateOrganization, CreatedOrganization>(
      new CreateOrganization({ name: `Org ${slug}`, slug, locale: 'en', unitSystem: 'metric', currency: options.currency ?? 'EUR', plan: 'pro' }, options.settings),
    );
    const key = await commands.execute<CreateApiKey, CreatedApiKey>(new CreateApiKey(organizationId, 'full', false));
    const readOnlyKey = await commands.execute<CreateApiKey, CreatedApiKey>(new CreateApiKey(organizationId, 'read-only', true));
    if (options.plan && options.plan !== 'pro') await commands.execute(new UpdateOrganization(organizationId, { plan: options.plan }));
    return { organizationId, slug, apiKey: key.key, readOnlyKey: readOnlyKey.key, signingSecret: mintedSigningSecret };
  }

  async close(): Promise<void> {
    await this.app.close();
    if (!this.ownsDir) return;
    rmSync(this.dataDir, { recursive: true, force: true });
    if (this.config.mongodbUrl) {
      const client = await MongoClient.connect(this.config.mongodbUrl);
      try {
        await client.db().dropDatabase();
      } finally {
        await client.close();
      }
    }
  }
}
