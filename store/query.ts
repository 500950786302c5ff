// Validation of pagination/sort/filter arguments and their translation to SQL fragments.
// Python answers 400 with a message for each of these mistakes (§4.2); so do we.
import { clip } from '../common/front-door';
import { BadRequestError } from './errors';
import type { FilterLogic, Pagination, SortOrder } from './types';

export interface CheckedPagination {
  limit: number; // -1 = unlimited
  offset: number;
  sortBy: string | null;
  sortOrder: SortOrder;
}

export function checkPagination(p: Pagination, allowedSortFields: readonly string[]): CheckedPagination {
  const limit = p.limit ?? -1;
  const offset = p.offset ?? 0;
  const sortOrder = (p.sort_order ?? 'asc') as string;
  const sortBy = p.sort_by ?? null;
  if (limit === 0 || limit < -1) throw new BadRequestError(`Invalid limit: ${limit}, must be -1 or a positive integer`);
  if (offset < 0) throw new BadRequestError(`Invalid offset: ${offset}, must be >= 0`);
  if (sortOrder !== 'asc' && sortOrder !== 'desc') {
    throw new BadRequestError(`Invalid sort_order: ${clip(sortOrder)}, must be 'asc' or 'desc'`);
  }
  if (sortBy !== null && !allowedSortFields.includes(sortBy)) {
    throw new BadRequestError(`Invalid sort_by: ${clip(sortBy)}, allowed fields are: ${allowedSortFields.join(', ')}`);
  }
  return { limit, offset, sortBy, sortOrder };
}

export function checkFilterLogic(value: string | undefined): FilterLogic {
  const logic = value ?? 'and';
  if (logic !== 'and' && logic !== 'or') throw new BadRequestError(`Invalid filter_logic: ${clip(logic)}, must be 'and' or 'or'`);
  return logic;
}

/**
 * ORDER BY clause. Columns are whitelisted by checkPagination before they reach here.
 * Fields ending in `_time` sort nulls last ascending (Python treats them as +inf), so first descending.
 */
export function orderBy(sortBy: string | null, order: SortOrder, fallback: string): string {
  if (sortBy === null) return `ORDER BY ${fallback}`;
  const dir = order === 'asc' ? 'ASC' : 'DESC';
  const nullsLast = sortBy.endsWith('_time') ? `(${sortBy} IS NULL) ${dir}, ` : '';
  return `ORDER BY ${nullsLast}${sortBy} ${dir}, ${fallback}`;
}

export interface Condition {
  sql: string;
  params: unknown[];
}

export function inList(column: string, values: readonly unknown[]): Condition {
  if (values.length === 0) return { sql: '0', params: [] };
  return { sql: `${column} IN (${values.map(() => '?').join(', ')})`, params: [...values] };
}

export const contains = (column: string, needle: string): Condition => ({ sql: `instr(${column}, ?) > 0`, params: [needle] });
export const equals = (column: string, value: unknown): Condition => ({ sql: `${column} = ?`, params: [value] });

/** Combines conditions with AND/OR; no conditions matches everything. */
export function combine(conditions: Condition[], logic: FilterLogic): Condition {
  if (conditions.length === 0) return { sql: '1', params: [] };
  const joiner = logic === 'and' ? ' AND ' : ' OR ';
  return { sql: `(${conditions.map((c) => c.sql).join(joiner)})`, params: conditions.flatMap((c) => c.params) };
}

export const limitClause = (limit: number, offset: number): string => `LIMIT ${limit} OFFSET ${offset}`;
