// Images through every front door: an OpenAI chat `image_url`, a Responses `input_image` and an Anthropic `image`
// block reach the sampler of a vision policy (Qwen3-VL, qwen3_vl_instruct) as the image chunks the renderer makes
// (the image's own bytes, the token count the Qwen-VL processor gives it) between the text chunks, all three the
// same prompt. A remote URL, bytes that are no image and a model that cannot see are refused with a 400 in each
// API's own error format.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { deflateSync } from 'node:zlib';
import { getRenderer, getTokenizer, type ModelInputChunk } from '../../chat';
import { QWEN3_VL_IMAGE_PROCESSOR } from '../../chat/image-chunk';
import type { SampleParams } from '../../proxy/sampler';
import { standInTokenizerDir } from '../helpers/stand-in-tokenizers';
import { policy, post, startHarness, type Harness } from './helpers';

const VL = 'Qwen/Qwen3-VL-30B-A3B-Instruct';
const TEXT = 'Qwen/Qwen3-4B-Instruct-2507';

/** A real w x h grey PNG (one IDAT, no filter), made here so the test owns its bytes. */
function png(w: number, h: number): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (b: Buffer) => {
    let c = 0xffffffff;
    for (const x of b) c = crcTable[(c ^ x) & 0xff]! ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type), data]);
    const c = Buffer.alloc(4);
    c.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, c]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // greyscale
  const raw = Buffer.concat(Array.from({ length: h }, () => Buffer.concat([Buffer.from([0]), Buffer.alloc(w, 128)])));
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

const IMAGE = png(300, 200);
const DATA_URL = `data:image/png;base64,${IMAGE.toString('base64')}`;
const seen: (ModelInputChunk[] | undefined)[] = [];
const script = (_p: number[], params: SampleParams) => {
  seen.push(params.promptChunks);
  return 'A grey rectangle.';
};

let vision: Harness;
let text: Harness;
before(async () => {
  process.env.AGL_TOKENIZER_DIR = standInTokenizerDir([VL]);
  vision = await startHarness({ initial: policy({ switchId: 'vl', modelName: VL, baseModel: VL, renderer: 'qwen3_vl_instruct' }), script });
  text = await startHarness({ initial: policy({ switchId: 'txt', modelName: TEXT, baseModel: TEXT, renderer: 'qwen3_instruct' }), script });
});
after(async () => {
  await vision?.close();
  await text?.close();
});

const chatBody = (url: string) => ({
  messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this? ' }, { type: 'image_url', image_url: { url } }] }],
});
const responsesBody = (url: string) => ({
  model: 'm',
  input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is this? ' }, { type: 'input_image', image_url: url }] }],
});
const messagesBody = (source: object) => ({
  model: 'm',
  max_tokens: 32,
  messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this? ' }, { type: 'image', source }] }],
});
const BASE64_SOURCE = { type: 'base64', media_type: 'image/png', data: IMAGE.toString('base64') };

test('chat image_url, Responses input_image and Anthropic image blocks reach the sampler as the renderer\'s image chunks', async () => {
  seen.length = 0;
  const chat = await post(`${vision.proxy.url}/v1/chat/completions`, chatBody(DATA_URL));
  assert.equal(chat.status, 200, chat.text);
  const resp = await post(`${vision.proxy.url}/v1/responses`, responsesBody(DATA_URL));
  assert.equal(resp.status, 200, resp.text);
  const msg = await post(`${vision.proxy.url}/v1/messages`, messagesBody(BASE64_SOURCE));
  assert.equal(msg.status, 200, msg.text);
  assert.equal(chat.json.choices[0].message.content, 'A grey rectangle.');

  const renderer = getRenderer('qwen3_vl_instruct', getTokenizer(VL), { imageProcessor: QWEN3_VL_IMAGE_PROCESSOR });
  const expected = renderer.buildGenerationPrompt([{ role: 'user', content: [{ type: 'text', text: 'What is this? ' }, { type: 'image', image: DATA_URL }] }]).chunks;
  assert.equal(seen.length, 3);
  for (const chunks of seen) assert.deepEqual(chunks, expected, 'each API sent the rendered chunks');
  const image = expected.find((c) => c.type === 'image')!;
  assert.ok(image && image.type === 'image');
  // 300x200 rounds to 288x192 (factor 32), under 65536 pixels, so it is scaled up to 320x224: 20*14 patches / 4.
  assert.equal(image.expected_tokens, 70);
  assert.equal(image.data, IMAGE.toString('base64'));
  assert.equal(image.format, 'png');
  const tok = getTokenizer(VL);
  const before = expected[expected.indexOf(image) - 1]!;
  assert.ok(before.type === 'encoded_text' && tok.decode(before.tokens).endsWith('<|vision_start|>'));
  // The prompt's usage counts the image's positions, as the model does.
  assert.equal(chat.json.usage.prompt_tokens, expected.reduce((n, c) => n + (c.type === 'image' ? c.expected_tokens : c.tokens.length), 0));
});

test('a remote image URL is refused with a 400 in each API\'s format (nothing is fetched)', async () => {
  const remote = 'https://example.com/cat.png';
  const chat = await post(`${vision.proxy.url}/v1/chat/completions`, chatBody(remote));
  assert.equal(chat.status, 400);
  assert.equal(chat.json.error.code, 'remote_image_not_fetched');
  assert.match(chat.json.error.message, /data: URL/);
  const resp = await post(`${vision.proxy.url}/v1/responses`, responsesBody(remote));
  assert.equal(resp.status, 400);
  assert.equal(resp.json.error.code, 'remote_image_not_fetched');
  const msg = await post(`${vision.proxy.url}/v1/messages`, messagesBody({ type: 'url', url: remote }));
  assert.equal(msg.status, 400);
  assert.deepEqual([msg.json.type, msg.json.error.type], ['error', 'invalid_request_error']);
  assert.match(msg.json.error.message, /remote image URLs are not fetched/);
});

test('bytes that are not an image, and formats other than PNG and JPEG, are refused with a 400 naming the problem', async () => {
  const junk = await post(`${vision.proxy.url}/v1/chat/completions`, chatBody('data:image/png;base64,aGVsbG8gd29ybGQ='));
  assert.equal(junk.status, 400);
  assert.match(junk.json.error.message, /not hold a readable image/);
  const gif = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');
  const g = await post(`${vision.proxy.url}/v1/chat/completions`, chatBody(`data:image/gif;base64,${gif.toString('base64')}`));
  assert.equal(g.status, 400);
  assert.match(g.json.error.message, /image format gif is not served; send PNG or JPEG/);
});

test('a model that cannot see refuses images with a 400 in each API\'s format, and still answers text', async () => {
  seen.length = 0;
  const chat = await post(`${text.proxy.url}/v1/chat/completions`, chatBody(DATA_URL));
  assert.equal(chat.status, 400);
  assert.equal(chat.json.error.code, 'images_not_supported');
  assert.match(chat.json.error.message, /cannot see: its renderer qwen3_instruct renders no images/);
  const resp = await post(`${text.proxy.url}/v1/responses`, responsesBody(DATA_URL));
  assert.equal(resp.status, 400);
  assert.equal(resp.json.error.code, 'images_not_supported');
  const msg = await post(`${text.proxy.url}/v1/messages`, messagesBody(BASE64_SOURCE));
  assert.equal(msg.status, 400);
  assert.deepEqual([msg.json.type, msg.json.error.type], ['error', 'invalid_request_error']);
  assert.match(msg.json.error.message, /cannot see/);
  assert.equal(seen.length, 0, 'nothing was sampled');
  const plain = await post(`${text.proxy.url}/v1/chat/completions`, { messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(plain.status, 200, plain.text);
});
