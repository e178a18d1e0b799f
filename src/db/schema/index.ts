export * from './portals.ts';
export * from './users.ts';
export * from './api-tokens.ts';
export * from './audit-events.ts';
export * from './sessions.ts';
export * from './connections.ts';
export * from './data-deletion-requests.ts';
