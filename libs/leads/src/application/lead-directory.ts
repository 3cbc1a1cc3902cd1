import { Injectable } from '@nestjs/common';
import { decodeCursor, encodeCursor, type Page } from '@lib/http';
import { ReadStore, type Filter } from '@lib/read-store';
import { LeadNotFound } from '../domain/lead.errors';
import type { LeadStatus } from '../domain/lead.events';
import { LEADS, type LeadDocument } from '../projections/leads.projection';

/** The api-v1 Lead. */
export interface Lead {
  id: string;
  name: string;
  email: string;
  phone: string | null;
  message: string;
  status: LeadStatus;
  createdAt: number;
}

export function toLead(doc: LeadDocument): Lead {
  return { id: doc.id, name: doc.name, email: doc.email, phone: doc.phone, message: doc.message, status: doc.status, createdAt: doc.createdAt };
}

export interface LeadListOptions {
  status?: LeadStatus;
  limit: number;
  cursor?: string;
}

const LIST = 'leads';
const NEWEST_FIRST = [
  { field: 'createdAt', direction: 'desc' as const },
  { field: 'id', direction: 'desc' as const },
];

/** Read access to leads, always scoped to one organization. */
@Injectable()
export class LeadDirectory {
  constructor(private readonly reads: ReadStore) {}

  async find(organizationId: string, leadId: string): Promise<Lead | null> {
    const doc = await this.reads.get<LeadDocument>(LEADS, leadId);
    return doc && doc.organizationId === organizationId ? toLead(doc) : null;
  }

  /** Another organization's lead is not found, never forbidden. */
  async get(organizationId: string, leadId: string): Promise<Lead> {
    const lead = await this.find(organizationId, leadId);
    if (!lead) throw new LeadNotFound();
    return lead;
  }

  /** Newest first, keyset-paged. */
  async list(organizationId: string, options: LeadListOptions): Promise<Page<Lead>> {
    const listed = { status: options.status };
    const after = decodeCursor(LIST, options.cursor, listed);
    const filter: Filter = { organizationId };
    if (options.status !== undefined) filter.status = options.status;
    const { items, nextAfter } = await this.reads.find<LeadDocument>(LEADS, { filter, sort: NEWEST_FIRST, limit: options.limit, after });
    return { data: items.map(toLead), nextCursor: nextAfter ? encodeCursor(LIST, nextAfter, listed) : null };
  }
}
