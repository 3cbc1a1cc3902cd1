import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiErrors } from '@lib/http';
import { Clock } from '@lib/shared';
import { FileLinkInvalid, FileLinks, quotePdfPath } from '../documents/file-links';
import { QuotePdfs, type PdfFile } from '../documents/quote-pdfs';

const PDF_FILE = /^([1-9]\d{0,8})\.pdf$/;

/** Sends a PDF: inline, never cached by shared caches, never sniffed as something else. */
export function sendPdf(reply: FastifyReply, file: PdfFile): void {
  void reply
    .header('Content-Type', 'application/pdf')
    .header('Content-Disposition', `inline; filename="${file.filename.replace(/[^A-Za-z0-9_.-]/g, '_')}"`)
    .header('Cache-Control', 'private, no-store')
    .header('X-Content-Type-Options', 'nosniff')
    .send(file.bytes);
}

/**
 * The signed download links of `pdf.url` (GET /api/v1/quotes/{id}). The signature is the only
 * credential: it is checked before anything is looked up.
 */
@ApiTags('files')
@Controller('files/quotes')
export class QuoteFilesController {
  constructor(
    private readonly links: FileLinks,
    private readonly pdfs: QuotePdfs,
    private readonly clock: Clock,
  ) {}

  @Get(':quoteId/v/:file')
  @ApiOperation({
    summary: 'Download a quote PDF (signed link)',
    description:
      'The link comes from `pdf.url` of GET /api/v1/quotes/{id} and is valid for 5 minutes. A changed path, expiry or signature answers 403 `link_invalid`; an expired link 403 `link_expired` (read the quote again for a fresh link).',
  })
  @ApiParam({ name: 'file', description: '`<version>.pdf`', example: '1.pdf' })
  @ApiQuery({ name: 'expires', type: String, description: 'Unix ms after which the link is refused' })
  @ApiQuery({ name: 'signature', type: String, description: 'hex HMAC-SHA256 of the path and expiry' })
  @ApiOkResponse({ description: 'the PDF', content: { 'application/pdf': { schema: { type: 'string', format: 'binary' } } } })
  @ApiErrors('link_invalid', 'link_expired', 'not_found')
  async download(
    @Param('quoteId') quoteId: string,
    @Param('file') fileName: string,
    @Query('expires') expires: string | undefined,
    @Query('signature') signature: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const match = PDF_FILE.exec(fileName);
    if (!match) throw new FileLinkInvalid();
    const version = Number(match[1]);
    this.links.verify(quotePdfPath(quoteId, version), typeof expires === 'string' ? expires : undefined, typeof signature === 'string' ? signature : undefined, this.clock.now());
    sendPdf(reply, await this.pdfs.file(quoteId, version));
  }
}
