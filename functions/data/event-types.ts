/** The kinds of state change that write an event. Plain data: the OpenAPI document reads it too. */
export const EVENT_TYPES = [
  'code_generator.created',
  'code_generator.updated',
  'codes.issued',
  'transaction.voided',
  'codes.redeemed',
  'codes.released',
  'export.completed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
