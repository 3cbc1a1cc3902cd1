import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { statusOf } from './error-status';

/** Documents the error codes an operation can answer with, grouped by HTTP status. */
export function ApiErrors(...codes: string[]): MethodDecorator & ClassDecorator {
  const byStatus = new Map<number, string[]>();
  for (const code of codes) byStatus.set(statusOf(code), [...(byStatus.get(statusOf(code)) ?? []), code]);
  return applyDecorators(
    ...[...byStatus].map(([status, list]) =>
      ApiResponse({ status, description: `error.code: ${list.map((c) => `\`${c}\``).join(', ')}`, schema: { $ref: '#/components/schemas/ErrorEnvelope' } }),
    ),
  );
}
