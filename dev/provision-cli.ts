// `npm run temporal:provision`: finds or installs the Temporal CLI and prints its path.
import { provisionTemporalCli } from './temporal-cli';

provisionTemporalCli()
  .then((cli) => process.stdout.write(`${cli.path}\n`))
  .catch((err: Error) => {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  });
