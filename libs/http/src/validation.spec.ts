import type { ArgumentMetadata, ValidationError } from '@nestjs/common';
import { Type } from 'class-transformer';
import { IsArray, IsInt, IsNumber, IsObject, IsOptional, IsString, Max, Min, ValidateNested } from 'class-validator';
import { ValidationFailed } from '@lib/shared';
import { createValidationPipe, flattenValidationErrors } from './validation';

const error = (property: string | undefined, constraints?: Record<string, string>, children: ValidationError[] = [], value: unknown = 'given'): ValidationError =>
  ({ property, constraints, children, value }) as ValidationError;

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

  it('tells a missing field that it is required, and a value of the wrong kind only what kind it must be', () => {
    const errors = [
      { ...error('quantity', { max: 'quantity must not be greater than 1000000', isNumber: 'quantity must be a finite number' }), value: undefined },
      error('unitPrice', { max: 'unitPrice must not be greater than 1000000000', min: 'unitPrice must not be less than 0', isNumber: 'unitPrice must be a finite number' }, [], '12.50'),
      error('description', { maxLength: 'description must be shorter than or equal to 2000 characters', isNotEmpty: 'description should not be empty' }, [], ''),
      error('limit', { max: 'limit must not be greater than 100', min: 'limit must not be less than 1', isInt: 'limit must be an integer number' }, [], 'abc'),
    ];
    expect(flattenValidationErrors(errors)).toEqual([
      { path: 'quantity', message: 'quantity is required' },
      { path: 'unitPrice', message: 'unitPrice must be a finite number' },
      { path: 'description', message: 'description should not be empty' },
      { path: 'limit', message: 'limit must be an integer number' },
    ]);
  });

  it('keeps brackets that are part of a query parameter name, and a top-level index bare', () => {
    const errors = [
      error('limit[]', { whitelistValidation: 'property limit[] should not exist' }),
      error('status[$ne]', { whitelistValidation: 'property status[$ne] should not exist' }),
      error('0', { isObject: 'must be an object' }),
    ];
    expect(flattenValidationErrors(errors)).toEqual([
      { path: 'limit[]', message: 'unknown field' },
      { path: 'status[$ne]', message: 'unknown field' },
      { path: '0', message: 'must be an object' },
    ]);
  });

  it('tells an array where an object belongs that it is no object, and not what its items lack', () => {
    const items = [error('0', undefined, [{ ...error('name', { isDefined: 'name should not be null or undefined' }), value: undefined }])];
    const errors = [
      error('customer', { isNotEmptyObject: 'customer must be a non-empty object' }, items, [{}]),
      error('settings', { isObject: 'settings must be an object' }, items, [{}]),
      // a list of objects checks its items, as it must
      error('lineItems', undefined, items, [{}]),
    ];
    expect(flattenValidationErrors(errors)).toEqual([
      { path: 'customer', message: 'customer must be a non-empty object' },
      { path: 'settings', message: 'settings must be an object' },
      { path: 'lineItems[0].name', message: 'name is required' },
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

describe('the validation pipe with queries it has seen', () => {
  class Query {
    @Type(() => Number) @IsOptional() @IsInt() @Min(1) limit?: number;
    @IsOptional() @IsString() cursor?: string;
  }
  const pipe = createValidationPipe();
  const asQuery = { type: 'query', metatype: Query } as ArgumentMetadata;

  it('answers a repeated query with a fresh instance of the same values', async () => {
    const first = (await pipe.transform({ limit: '5' }, asQuery)) as Query;
    first.limit = 99;
    const second = (await pipe.transform({ limit: '5' }, asQuery)) as Query;
    expect(second).toBeInstanceOf(Query);
    expect(second).toEqual(Object.assign(new Query(), { limit: 5 }));
    expect(second).not.toBe(first);
  });

  it('refuses an invalid query every time, and a valid one seen before does not make another pass', async () => {
    await pipe.transform({ limit: '5' }, asQuery);
    for (let i = 0; i < 2; i++) {
      await expect(pipe.transform({ limit: '0' }, asQuery)).rejects.toBeInstanceOf(ValidationFailed);
      await expect(pipe.transform({ limit: '5', extra: 'x' }, asQuery)).rejects.toBeInstanceOf(ValidationFailed);
    }
  });

  it('transforms valid bodies and refuses invalid ones', async () => {
    const asBody = { type: 'body', metatype: Query } as ArgumentMetadata;
    expect(await pipe.transform({ limit: 5 }, asBody)).toEqual(Object.assign(new Query(), { limit: 5 }));
    await expect(pipe.transform({ limit: 0 }, asBody)).rejects.toBeInstanceOf(ValidationFailed);
  });
});

describe('the validation pipe on bodies', () => {
  class Line {
    @IsNumber({ allowNaN: false, allowInfinity: false }, { message: '$property must be a finite number' }) @Min(0) @Max(1e9) unitPrice!: number;
    @IsOptional() @IsString() note?: string;
  }
  const pipe = createValidationPipe();
  const asBody = { type: 'body', metatype: Line } as ArgumentMetadata;
  const fields = (body: unknown) => pipe.transform(body, asBody).then(() => [], (error: ValidationFailed) => error.fields);

  it('tells a missing field it is required, a string where a number belongs only that, and an out-of-range number its range', async () => {
    expect(await fields({})).toEqual([{ path: 'unitPrice', message: 'unitPrice is required' }]);
    expect(await fields({ unitPrice: '12.50' })).toEqual([{ path: 'unitPrice', message: 'unitPrice must be a finite number' }]);
    expect(await fields({ unitPrice: null })).toEqual([{ path: 'unitPrice', message: 'unitPrice must be a finite number' }]);
    expect(await fields({ unitPrice: -1 })).toEqual([{ path: 'unitPrice', message: 'unitPrice must not be less than 0' }]);
    expect(await fields({ unitPrice: 1, note: 5, extra: true })).toEqual([
      { path: 'extra', message: 'unknown field' },
      { path: 'note', message: 'note must be a string' },
    ]);
  });

  it('refuses fields named after Object.prototype members as unknown, in nested bodies and queries too, and leaves free-form maps alone', async () => {
    class Order {
      @ValidateNested({ each: true }) @Type(() => Line) @IsArray() lines!: Line[];
      @IsOptional() @IsObject() tags?: Record<string, unknown>;
    }
    const order = { type: 'body', metatype: Order } as ArgumentMetadata;
    const orderFields = (body: unknown) => pipe.transform(body, order).then(() => [], (error: ValidationFailed) => error.fields);
    for (const name of ['toString', 'valueOf', 'hasOwnProperty', 'constructor', 'isPrototypeOf']) {
      expect(await fields({ unitPrice: 1, [name]: 1 })).toEqual([{ path: name, message: 'unknown field' }]);
      expect(await orderFields({ lines: [{ unitPrice: 1 }, { unitPrice: 2, [name]: 'x' }] })).toEqual([{ path: `lines[1].${name}`, message: 'unknown field' }]);
    }
    expect(await orderFields({ lines: [], tags: { toString: 'kept', constructor: 1 } })).toEqual([]);
    class Query {
      @IsOptional() @IsString() cursor?: string;
    }
    await expect(pipe.transform({ toString: '1' }, { type: 'query', metatype: Query } as ArgumentMetadata)).rejects.toMatchObject({ fields: [{ path: 'toString', message: 'unknown field' }] });
  });
});
