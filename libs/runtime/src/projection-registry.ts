import { Injectable } from '@nestjs/common';
import type { Projection } from '@lib/event-sourcing';

/** Domain modules register their projections here; the projector runs them all. */
@Injectable()
export class ProjectionRegistry {
  private readonly projections = new Map<string, Projection>();

  register(...projections: Projection[]): void {
    for (const projection of projections) this.projections.set(projection.name, projection);
  }

  all(): Projection[] {
    return [...this.projections.values()];
  }

  get(name: string): Projection | undefined {
    return this.projections.get(name);
  }
}
