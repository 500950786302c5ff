// Resources (§3.5): added, upserted, looked up; the latest is the one touched last.
import { newResourcesId } from './ids';
import { checkPagination, combine, contains, equals, limitClause, orderBy, type Condition } from './query';
import { resourcesFromRow, type ResourcesRow } from './rows';
import type { StoreDb } from './store-db';
import type { NamedResources, PaginatedResult, QueryResourcesRequest, ResourcesUpdate } from './types';

const RESOURCES_FIELDS = ['resources_id', 'create_time', 'update_time', 'version', 'resources'];

export function addResources(s: StoreDb, resources: NamedResources, idempotencyKey: string | null): ResourcesUpdate {
  return s.tx(() => {
    if (idempotencyKey !== null) {
      const seen = s.stmt('SELECT * FROM resources WHERE idempotency_key = ?').get(idempotencyKey) as ResourcesRow | undefined;
      if (seen) return resourcesFromRow(seen);
    }
    const now = s.now();
    const id = newResourcesId();
    s.stmt(`INSERT INTO resources (resources_id, create_time, update_time, version, resources, touched, idempotency_key)
      VALUES (?, ?, ?, 1, ?, (SELECT COALESCE(MAX(touched), 0) + 1 FROM resources), ?)`)
      .run(id, now, now, JSON.stringify(resources), idempotencyKey);
    return getResourcesById(s, id) as ResourcesUpdate;
  });
}

/** Upsert: a missing id is created with version 1; an existing one is replaced with version + 1. Becomes latest. */
export function updateResources(s: StoreDb, resourcesId: string, resources: NamedResources): ResourcesUpdate {
  return s.tx(() => {
    const now = s.now();
    if (getResourcesById(s, resourcesId)) {
      s.stmt(`UPDATE resources SET resources = ?, update_time = ?, version = version + 1,
        touched = (SELECT COALESCE(MAX(touched), 0) + 1 FROM resources) WHERE resources_id = ?`)
        .run(JSON.stringify(resources), now, resourcesId);
    } else {
      s.stmt(`INSERT INTO resources (resources_id, create_time, update_time, version, resources, touched)
        VALUES (?, ?, ?, 1, ?, (SELECT COALESCE(MAX(touched), 0) + 1 FROM resources))`)
        .run(resourcesId, now, now, JSON.stringify(resources));
    }
    return getResourcesById(s, resourcesId) as ResourcesUpdate;
  });
}

export function getResourcesById(s: StoreDb, resourcesId: string): ResourcesUpdate | null {
  const row = s.stmt('SELECT * FROM resources WHERE resources_id = ?').get(resourcesId) as ResourcesRow | undefined;
  return row ? resourcesFromRow(row) : null;
}

export function getLatestResources(s: StoreDb): ResourcesUpdate | null {
  const row = s.stmt('SELECT * FROM resources ORDER BY touched DESC LIMIT 1').get() as ResourcesRow | undefined;
  return row ? resourcesFromRow(row) : null;
}

export function queryResources(s: StoreDb, q: QueryResourcesRequest): PaginatedResult<ResourcesUpdate> {
  const p = checkPagination(q, RESOURCES_FIELDS);
  const conditions: Condition[] = [];
  if (q.resources_id) conditions.push(equals('resources_id', q.resources_id));
  if (q.resources_id_contains) conditions.push(contains('resources_id', q.resources_id_contains));
  const where = combine(conditions, 'and');
  const total = (s.stmt(`SELECT COUNT(*) AS n FROM resources WHERE ${where.sql}`).get(...where.params) as { n: number }).n;
  const rows = s.stmt(`SELECT * FROM resources WHERE ${where.sql} ${orderBy(p.sortBy, p.sortOrder, 'seq')} ${limitClause(p.limit, p.offset)}`)
    .all(...where.params) as ResourcesRow[];
  return { items: rows.map(resourcesFromRow), limit: p.limit, offset: p.offset, total };
}
