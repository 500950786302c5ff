// The records of a W&B transaction log this project writes, in W&B's own protobuf schema
// (wandb/proto/wandb_internal.proto, package wandb_internal): the fields of those records we fill, by number.
import protobuf from 'protobufjs';
import { recordJson } from '../records/run-files';

const root = protobuf.Root.fromJSON({
  nested: {
    Record: {
      fields: {
        num: { type: 'int64', id: 1 },
        history: { type: 'HistoryRecord', id: 2 },
        summary: { type: 'SummaryRecord', id: 3 },
        run: { type: 'RunRecord', id: 17 },
        exit: { type: 'RunExitRecord', id: 18 },
        header: { type: 'HeaderRecord', id: 21 },
      },
    },
    HistoryRecord: { fields: { item: { rule: 'repeated', type: 'Item', id: 1 }, step: { type: 'HistoryStep', id: 2 } } },
    HistoryStep: { fields: { num: { type: 'int64', id: 1 } } },
    SummaryRecord: { fields: { update: { rule: 'repeated', type: 'Item', id: 1 } } },
    ConfigRecord: { fields: { update: { rule: 'repeated', type: 'Item', id: 1 } } },
    /** HistoryItem, SummaryItem and ConfigItem share these numbers. */
    Item: { fields: { key: { type: 'string', id: 1 }, value_json: { type: 'string', id: 16 } } },
    RunRecord: {
      fields: {
        run_id: { type: 'string', id: 1 },
        entity: { type: 'string', id: 2 },
        project: { type: 'string', id: 3 },
        config: { type: 'ConfigRecord', id: 4 },
        display_name: { type: 'string', id: 8 },
        start_time: { type: 'Timestamp', id: 17 },
      },
    },
    Timestamp: { fields: { seconds: { type: 'int64', id: 1 }, nanos: { type: 'int32', id: 2 } } },
    RunExitRecord: { fields: { exit_code: { type: 'int32', id: 1 }, runtime: { type: 'int32', id: 2 } } },
    HeaderRecord: { fields: { version_info: { type: 'VersionInfo', id: 1 } } },
    VersionInfo: { fields: { producer: { type: 'string', id: 1 }, min_consumer: { type: 'string', id: 2 } } },
  },
});
const RecordType = root.lookupType('Record');

export interface WandbRecord {
  num?: number;
  history?: { item: { key: string; value_json: string }[]; step: { num: number } };
  summary?: { update: { key: string; value_json: string }[] };
  run?: {
    run_id: string;
    entity?: string;
    project: string;
    display_name: string;
    config: { update: { key: string; value_json: string }[] };
    start_time: { seconds: number; nanos: number };
  };
  exit?: { exit_code: number; runtime?: number };
  header?: { version_info: { producer: string; min_consumer?: string } };
}

export const encodeRecord = (r: WandbRecord): Uint8Array => RecordType.encode(RecordType.fromObject(r)).finish();
export const decodeRecord = (b: Uint8Array): WandbRecord =>
  RecordType.toObject(RecordType.decode(b), { longs: Number, defaults: false }) as WandbRecord;

/** key/value_json items of an object; W&B keeps every value as JSON text (NaN and Infinity as Python writes them). */
export const items = (o: Record<string, unknown>) => Object.entries(o).map(([key, v]) => ({ key, value_json: recordJson(v) }));
