import { Controller, Get, Headers, Param, Query, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { OrganizationDirectory } from '@lib/organizations';
import { QuoteQueries } from '@lib/quotes';
import { SubmissionQueries } from '@lib/submissions';
import { isLocale, type Locale } from '../client/locale';
import { loadPageAssets } from '../assets/page-assets';
import { renderNotFoundPage, renderPageShell, type PageShell } from './page-shell';

/** Quote tokens are 43 base62 characters (as the storefront quote API checks). */
const QUOTE_TOKEN = /^[0-9A-Za-z]{43}$/;

const SCRIPT_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'";

/**
 * The customer pages, served by the product itself: the configurator `/c/{orgSlug}[/{templateId}]`,
 * the quote `/q/{quoteToken}` (the link in the quote e-mail) and the contact form
 * `/contact/{orgSlug}`, plus their scripts and stylesheet under `/assets/`. The language is `?lang=`
 * when given, else the customer's (the submission's, for a quote), else the organization's.
 */
@ApiExcludeController()
@Controller()
export class CustomerPagesController {
  constructor(
    private readonly organizations: OrganizationDirectory,
    private readonly quotes: QuoteQueries,
    private readonly submissions: SubmissionQueries,
  ) {}

  @Get('c/:orgSlug')
  async configurator(@Param('orgSlug') orgSlug: string, @Query('lang') lang: unknown, @Res() reply: FastifyReply): Promise<void> {
    await this.organizationPage(reply, 'configurator', orgSlug, lang, '../', {});
  }

  @Get('c/:orgSlug/:templateId')
  async configuratorForTemplate(
    @Param('orgSlug') orgSlug: string,
    @Param('templateId') templateId: string,
    @Query('lang') lang: unknown,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await this.organizationPage(reply, 'configurator', orgSlug, lang, '../../', { template: templateId });
  }

  @Get('contact/:orgSlug')
  async contact(@Param('orgSlug') orgSlug: string, @Query('lang') lang: unknown, @Res() reply: FastifyReply): Promise<void> {
    await this.organizationPage(reply, 'contact', orgSlug, lang, '../', {});
  }

  /**
   * Only reads: the quote counts as viewed when the page script loads it, not when a mail scanner
   * fetches the link. The token never leaves through a Referer.
   */
  @Get('q/:quoteToken')
  async quote(@Param('quoteToken') token: string, @Query('lang') lang: unknown, @Res() reply: FastifyReply): Promise<void> {
    const link = QUOTE_TOKEN.test(token) ? await this.quotes.findLink(token) : null;
    let locale: Locale = isLocale(lang) ? lang : 'en';
    let title = 'Quote';
    if (link) {
      const organization = await this.organizations.get(link.organizationId);
      title = `${link.offer.quoteNumber} · ${organization.name}`;
      if (!isLocale(lang)) locale = (await this.customerLocale(link.organizationId, link.quoteId)) ?? (isLocale(organization.locale) ? organization.locale : 'en');
    }
    void reply
      .status(link ? 200 : 404)
      .header('Content-Type', 'text/html; charset=utf-8')
      .header('Content-Security-Policy', `${SCRIPT_POLICY}; frame-ancestors 'none'`)
      .header('Referrer-Policy', 'no-referrer')
      .header('Cache-Control', 'no-store')
      .header('X-Content-Type-Options', 'nosniff')
      .header('X-Robots-Tag', 'noindex')
      .send(renderPageShell({ page: 'quote', locale, root: '../', title }));
  }

  @Get('assets/:file')
  async asset(@Param('file') file: string, @Headers('if-none-match') ifNoneMatch: string | undefined, @Res() reply: FastifyReply): Promise<void> {
    const found = (await loadPageAssets()).get(file);
    if (!found) {
      void reply.status(404).header('Content-Type', 'text/plain; charset=utf-8').send('Not found');
      return;
    }
    void reply.header('Cache-Control', 'no-cache').header('ETag', found.etag).header('X-Content-Type-Options', 'nosniff');
    if (ifNoneMatch === found.etag) {
      void reply.status(304).send();
      return;
    }
    void reply.header('Content-Type', found.type).send(found.body);
  }

  private async organizationPage(reply: FastifyReply, page: PageShell['page'], orgSlug: string, lang: unknown, root: string, data: Record<string, string>): Promise<void> {
    const organization = await this.organizations.findBySlug(orgSlug);
    const locale: Locale = isLocale(lang) ? lang : organization && isLocale(organization.locale) ? organization.locale : 'en';
    void reply
      .header('Content-Type', 'text/html; charset=utf-8')
      // The configurator may be embedded in the organization's own site (session origin `embed`).
      .header('Content-Security-Policy', SCRIPT_POLICY)
      .header('Referrer-Policy', 'same-origin')
      .header('Cache-Control', 'no-cache')
      .header('X-Content-Type-Options', 'nosniff');
    if (!organization) {
      void reply.status(404).send(renderNotFoundPage(locale, root));
      return;
    }
    void reply.send(renderPageShell({ page, locale, root, title: organization.name, data: { org: organization.slug, ...data } }));
  }

  /** The language the customer configured in, which the quote e-mail used too. */
  private async customerLocale(organizationId: string, quoteId: string): Promise<Locale | null> {
    const quote = await this.quotes.get(organizationId, quoteId);
    const submission = await this.submissions.get(organizationId, quote.submissionId);
    return isLocale(submission.locale) ? submission.locale : null;
  }
}
