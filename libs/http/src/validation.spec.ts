import type { ValidationError } from '@nestjs/common';
import { flattenValidationErrors } from './validation';

const error = (property: string | undefined, constraints?: Record<string, string>, children: ValidationError[] = []): ValidationError =>
  ({ property, constraints, children }) as ValidationError;

describe('flattenValidationErrors', () => {
  it('turns nested errors into dotted paths with array indexes', () => {
    const errors = [
      error('lineItems', undefined, [error('0', undefined, [error('quantity', { min: 'quantity must not be less than 0' })])]),
      error('extra', { whitelistValidation: 'property extra should not exist' }),
    ];
    expect(flattenValidationErrors(errors)).toEqual([
      { path: 'lineItems[0].quantity', message: 'quantity must not be less than 0' },
      { path: 'extra', message: 'unknown field' },
    ]);
  });

  it('reports an error about the value itself at its parent path', () => {
    const errors = [error('lineItems', undefined, [error(undefined, { isArray: 'lineItems must be an array' })]), error(undefined, { unknownValue: 'an unknown value was passed' })];
    expect(flattenValidationErrors(errors)).toEqual([
      { path: 'lineItems', message: 'lineItems must be an array' },
      { path: '', message: 'an unknown value was passed' },
    ]);
  });
});
