import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { ValidationFailed, type FieldError } from '@lib/shared';

/** class-validator errors as `{ path, message }` with paths like `lineItems[0].quantity`. */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldError[] {
  const out: FieldError[] = [];
  for (const error of errors) {
    // Errors about the value itself (e.g. an object where an array belongs) have no property.
    const property = typeof error.property === 'string' ? error.property : '';
    const segment = /^\d+$/.test(property) ? `[${property}]` : property;
    const path = !segment ? parent : parent ? (segment.startsWith('[') ? `${parent}${segment}` : `${parent}.${segment}`) : segment.replace(/^\[|\]$/g, '');
    for (const message of Object.values(error.constraints ?? {})) {
      out.push({ path, message: message.replace(/^property (\S+) should not exist$/, 'unknown field') });
    }
    if (error.children?.length) out.push(...flattenValidationErrors(error.children, path));
  }
  return out;
}

/** Validation at the edge: DTO classes with class-validator; unknown fields are rejected. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transformOptions: { enableImplicitConversion: false },
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new ValidationFailed(flattenValidationErrors(errors)),
  });
}
