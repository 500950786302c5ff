import os from 'node:os';

export interface HealthActivities {
  describeWorker(): Promise<{ hostname: string; pid: number; node: string; uptimeSeconds: number }>;
}

export const healthActivities: HealthActivities = {
  async describeWorker() {
    return { hostname: os.hostname(), pid: process.pid, node: process.version, uptimeSeconds: Math.round(process.uptime()) };
  },
};
