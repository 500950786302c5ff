// The subset of Tinker's protobuf package `tinker_public` (proto3) that we read and write: the
// forward_backward request body and the sample / forward_backward results of retrieve_future.
// Written from the field table in reference/tinker-protocol.md §A.7, checked against SDK 0.38.0.
// Fields we do not model (provenance spans, top-k, prompt alt tokens) are skipped by the decoder. Optional
// bytes fields are declared plain: an empty value reads as absent, as the SDK treats it.
import { Root, type Type } from 'protobufjs';

const descriptor = {
  nested: {
    tinker_public: {
      nested: {
        StopReason: { values: { STOP_REASON_STOP: 0, STOP_REASON_LENGTH: 1 } },
        DType: {
          values: { DTYPE_UNSPECIFIED: 0, DTYPE_FLOAT32: 1, DTYPE_INT64: 2, DTYPE_INT32: 3, DTYPE_BFLOAT16: 4 },
        },
        SampleResponse: {
          fields: {
            sequences: { rule: 'repeated', type: 'SampledSequence', id: 1 },
            prompt_logprobs: { type: 'bytes', id: 2 },
            prompt_cache_hit_tokens: { type: 'int32', id: 4 },
          },
        },
        SampledSequence: {
          fields: {
            stop_reason: { type: 'StopReason', id: 1 },
            tokens: { type: 'bytes', id: 2 },
            logprobs: { type: 'bytes', id: 3 },
          },
        },
        SparseCsr: {
          fields: {
            values: { type: 'bytes', id: 1 },
            crow_indices: { type: 'bytes', id: 2 },
            col_indices: { type: 'bytes', id: 3 },
          },
        },
        Tensor: {
          oneofs: { encoding: { oneof: ['dense', 'sparse_csr'] } },
          fields: {
            dense: { type: 'bytes', id: 1 },
            sparse_csr: { type: 'SparseCsr', id: 2 },
            dtype: { type: 'DType', id: 3 },
            shape: { rule: 'repeated', type: 'int64', id: 4 },
          },
        },
        BatchedTensor: {
          fields: {
            data: { type: 'bytes', id: 1 },
            offsets: { type: 'bytes', id: 2 },
            dtype: { type: 'DType', id: 3 },
            trailing_shape: { rule: 'repeated', type: 'int64', id: 4 },
          },
        },
        ArrayRecord: {
          fields: {
            type_tag: { type: 'string', id: 1 },
            fields: { keyType: 'string', type: 'BatchedTensor', id: 2 },
            num_datums: { type: 'int64', id: 3 },
          },
        },
        ForwardBackwardOutput: {
          fields: {
            loss_fn_output_type: { type: 'string', id: 1 },
            loss_fn_outputs: { rule: 'repeated', type: 'ArrayRecord', id: 2 },
            metrics: { keyType: 'string', type: 'double', id: 3 },
          },
        },
        LossConfigValue: {
          oneofs: { value: { oneof: ['number', 'text'] } },
          fields: { number: { type: 'double', id: 1 }, text: { type: 'string', id: 2 } },
        },
        ForwardBackwardRequest: {
          fields: {
            model_id: { type: 'string', id: 1 },
            seq_id: { type: 'int32', id: 2 },
            data: { rule: 'repeated', type: 'Datum', id: 3 },
            loss_fn: { type: 'string', id: 4 },
            loss_fn_config: { keyType: 'string', type: 'double', id: 5 },
            forward_only: { type: 'bool', id: 6 },
            loss_fn_config_v2: { keyType: 'string', type: 'LossConfigValue', id: 7 },
          },
        },
        Datum: {
          fields: {
            model_input: { rule: 'repeated', type: 'Chunk', id: 1 },
            loss_fn_inputs: { keyType: 'string', type: 'Tensor', id: 2 },
          },
        },
        Chunk: {
          oneofs: { chunk: { oneof: ['encoded_text', 'image', 'dmel'] } },
          fields: {
            encoded_text: { type: 'EncodedTextChunk', id: 1 },
            image: { type: 'ImageChunk', id: 2 },
            dmel: { type: 'DmelChunk', id: 3 },
          },
        },
        EncodedTextChunk: { fields: { tokens: { type: 'bytes', id: 1 } } },
        ImageChunk: {
          fields: {
            data: { type: 'bytes', id: 1 },
            format: { type: 'string', id: 2 },
            expected_tokens: { type: 'int32', id: 3 },
          },
        },
        DmelChunk: { fields: { dmel: { type: 'bytes', id: 1 } } },
      },
    },
  },
};

const root = Root.fromJSON(descriptor);

export const pb: {
  SampleResponse: Type;
  ForwardBackwardOutput: Type;
  ForwardBackwardRequest: Type;
} = {
  SampleResponse: root.lookupType('tinker_public.SampleResponse'),
  ForwardBackwardOutput: root.lookupType('tinker_public.ForwardBackwardOutput'),
  ForwardBackwardRequest: root.lookupType('tinker_public.ForwardBackwardRequest'),
};

export const DType = { UNSPECIFIED: 0, FLOAT32: 1, INT64: 2, INT32: 3, BFLOAT16: 4 } as const;
export const StopReasonCode = { stop: 0, length: 1 } as const;
