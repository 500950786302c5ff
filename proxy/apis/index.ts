// The agent APIs the proxy serves, by name.
import type { ApiName } from '../internal-call';
import type { AgentApi } from './api';
import { chatApi } from './chat';
import { completionsApi } from './completions';
import { messagesApi } from './messages';
import { responsesApi } from './responses';

export const AGENT_APIS: Record<ApiName, AgentApi> = {
  chat: chatApi,
  responses: responsesApi,
  messages: messagesApi,
  completions: completionsApi,
};
