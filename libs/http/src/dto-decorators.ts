import { Transform } from 'class-transformer';
import { ValidateIf } from 'class-validator';
import { stripHtml } from '@lib/shared';

/** Free text is stored as plain text; length limits apply to what is stored. */
export const PlainText = () => Transform(({ value }) => (typeof value === 'string' ? stripHtml(value) : value));

/** As PlainText; a text that is empty once stripped clears the field (null). */
export const NullablePlainText = () =>
  Transform(({ value }) => {
    if (typeof value !== 'string') return value;
    const text = stripHtml(value);
    return text === '' ? null : text;
  });

export const Trimmed = () => Transform(({ value }) => (typeof value === 'string' ? value.trim() : value));

/** Present means it must be valid; unlike IsOptional, null is not let through. */
export const IfPresent = () => ValidateIf((_, value) => value !== undefined);
