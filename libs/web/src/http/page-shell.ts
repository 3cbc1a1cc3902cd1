import type { Locale } from '../client/locale';

export type PageName = 'configurator' | 'quote' | 'contact';

export interface PageShell {
  page: PageName;
  locale: Locale;
  /** relative path from the page's URL to the site root, so a PUBLIC_BASE_URL with a path prefix works */
  root: string;
  title: string;
  /** handed to the page script as data attributes of <body> */
  data?: Record<string, string>;
}

const LOADING: Record<Locale, { loading: string; noScript: string; notFound: string }> = {
  en: { loading: 'Loading…', noScript: 'This page needs JavaScript.', notFound: 'This page does not exist.' },
  de: { loading: 'Wird geladen…', noScript: 'Diese Seite benötigt JavaScript.', notFound: 'Diese Seite gibt es nicht.' },
  nl: { loading: 'Bezig met laden…', noScript: 'Deze pagina heeft JavaScript nodig.', notFound: 'Deze pagina bestaat niet.' },
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function document(locale: Locale, root: string, title: string, bodyAttributes: string, content: string, script: string | null): string {
  return `<!doctype html>
<html lang="${locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${escapeHtml(root)}assets/styles.css">
${script ? `<script src="${escapeHtml(root)}assets/${script}.js" defer></script>\n` : ''}</head>
<body${bodyAttributes}>
<main id="app">${content}</main>
</body>
</html>
`;
}

/**
 * The HTML a page starts from: the stylesheet, the page script and what the script needs to know
 * (locale, the org slug or template id). Everything else the script loads from the storefront API.
 */
export function renderPageShell(shell: PageShell): string {
  const attributes = { page: shell.page, locale: shell.locale, root: shell.root, ...shell.data };
  const body = Object.entries(attributes)
    .map(([key, value]) => ` data-${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}="${escapeHtml(value)}"`)
    .join('');
  const texts = LOADING[shell.locale];
  return document(shell.locale, shell.root, shell.title, body, `<p class="muted">${texts.loading}</p><noscript><p>${texts.noScript}</p></noscript>`, shell.page);
}

/** A page for an unknown organization: no script, just the message. */
export function renderNotFoundPage(locale: Locale, root: string): string {
  const { notFound } = LOADING[locale];
  return document(locale, root, notFound, '', `<h1>${notFound}</h1>`, null);
}
