// One virtual environment for the official readers of what the sinks write: wandb and tensorboard.
import { ensureVenv } from '../helpers/python';

export const READER_PACKAGES = ['wandb==0.31.0', 'tensorboard==2.21.0'];
export const READERS_VENV = () => ensureVenv('wandb-tensorboard', READER_PACKAGES);
