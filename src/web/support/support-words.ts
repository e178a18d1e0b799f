/**
 * Words the support pages share: the statuses and priorities in order, and a duration as people
 * read it.
 */
import { TICKET_PRIORITIES, TICKET_STATUSES } from '../../db/schema/support-tickets.ts';

export const QUEUE_STATUSES = TICKET_STATUSES;
export const TICKET_PRIORITY_NAMES = TICKET_PRIORITIES;

/** "—" for null; else "45 s", "12 min", "3 h 5 min", "2 d 4 h". */
export function durationWords(ms: number | null): string {
  if (ms === null) return '—';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 24) return `${h} h ${min % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** The badge tone of a ticket status: waiting on support warns, waiting on the customer informs. */
export function statusTone(status: string): 'ok' | 'warn' | 'info' | 'neutral' {
  if (status === 'new' || status === 'open') return 'warn';
  if (status === 'pending') return 'info';
  if (status === 'solved') return 'ok';
  return 'neutral';
}
