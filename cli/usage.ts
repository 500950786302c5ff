// The client's usage text (`npm run client -- --help`): every command in cli/commands.ts, with its arguments.
export const USAGE = `usage: npm run client -- <command> [args] [--address host:port] [--namespace ns] [--profile name] [--task-queue q]

commands:
  setup                  register the search attributes runs write (AglRunName, AglBatch...) on the namespace;
                         once per namespace (a server that does not allow it is answered with what to add where)
  validate <run.json>    check a run config; every problem is printed with its field path (exit 2 on problems)
  start <run.json>       validate, then start the run (workflow id agl-run-<runName>); attaches if it is running;
                         --fresh replaces a finished run of that name (and removes its logPath) to train it again
  fork <run> --from-step K [--name N] [--set key=value ...]
                         start a new run from <run>'s weights and optimizer state after step K, with its data
                         order and seeds from there on; --set changes fields of the config (e.g. learningRate=1e-4)
  sweep <run.json> --grid key=v1,v2 [--grid ...] [--seeds N] [--max-parallel N] [--early-stop S1,S2] [--name N]
                         train the config over the grid (x N seeds) as child runs <name>-c<i>-s<j> of one sweep
                         workflow (agl-sweep-<name>); at each --early-stop step the worse half (by the eval after
                         that step) stops with a final checkpoint; at most --max-parallel children train at once
  sweep-status <sweep>   the sweep's children (ranked best first once it is done) and its milestone decisions
  status <run>           where the run is (batch, phase, last rewards) or how it ended
  watch <run>            follow the run live until it ends
  pause <run>            hold the run before its next batch
  resume <run>           let a paused run go on
  checkpoint <run>       record a checkpoint of the latest trained policy now (a checkpoints.jsonl row)
  configure <run> k=v..  change learningRate, evalEvery, saveEvery, trainTemperature or evalTemperature
                         from the next batch on (e.g. configure hello learningRate=0.001 evalEvery=10)
  stop <run> [reason]    finish the batch in flight, save a final checkpoint, end cleanly; what the run still
                         waits on after 5 minutes (a trainer that never answers, say) is cancelled
  list                   training runs known to Temporal
  report <run> [<run>..] write an HTML report with plots (one run: <logPath>/report.html; several overlaid:
                         --out FILE, default ./report-<a>-vs-<b>.html); <run> may also be a run directory, or a
                         sweep (agl-sweep-<name>): all its children, ranked best first
  export <run>           write the run's files (metrics.jsonl, checkpoints.jsonl, trace, config, report.html) from
                         the store into --dir D (default ./<runName>); again later, appends only what is new
                         (--store URL, default $AGL_STORE_URL or http://127.0.0.1:4747; AGL_STORE_TOKEN)
  ping                   run a health-check workflow on the worker
  render --model M [--renderer R] [--supervised [--train-on W]] [--text] FILE
                         FILE = {"messages": [...], "tools": [...]} (OpenAI chat format) rendered for model M
                         (with its default renderer unless --renderer) as one JSON line; no Temporal needed.
                         Two modes: without --supervised, the sampling prompt: every message of FILE (a last
                         assistant message too), then the start of a new assistant turn, as {"tokens": [...]};
                         with --supervised, the training example: the conversation as trained, {"tokens": [...],
                         "weights": [...]} (1 = trained on; --train-on W, default last_assistant_message);
                         --text adds the decoded pieces. E.g. npm run client -- render --model Qwen/Qwen3-8B
                         --supervised --text docs/chat-example.json
  tokenizer fetch M      download model M's tokenizer files from the Hugging Face hub into the HF cache
                         (HF_HOME; HF_TOKEN if set), so render, validate and the proxy find them offline

<run> is a runName or a workflow id (agl-run-<runName>). Batches count from 0, as metrics.jsonl's step.
The server and how to reach it: Temporal's standard settings, as the Temporal CLI reads them (TEMPORAL_ADDRESS,
TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_CLIENT_CERT_PATH..., TEMPORAL_PROFILE and its TOML file;
docs/connecting.md); --address, --namespace and --profile win over them.
A mistake is answered with one line and exit code 1 (2 for a wrong command line or an invalid run config).`;
