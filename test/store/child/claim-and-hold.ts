/**
 * A replica's worker, reduced to its lease: claims one job from the database at argv[2] with a lease of
 * argv[3] ms, prints it as a JSON line, and renews the lease every argv[4] ms until the process is killed
 * (test/store/jobs-processes.test.ts kills it with SIGKILL).
 */
import { systemClock } from '../../../src/core/clock.js';
import { openDatabase } from '../../../src/store/sql/open-database.js';
import { JobStore } from '../../../src/store/sql/jobs.js';

const [url, leaseMs, heartbeatMs] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4])];
const handle = await openDatabase({ url, dataDir: process.cwd() });
const jobs = new JobStore(handle.db, systemClock);
const job = await jobs.claim(`child-${process.pid}`, leaseMs);
process.stdout.write(`${JSON.stringify(job)}\n`);
if (job) setInterval(() => void jobs.heartbeat(job, leaseMs), heartbeatMs);
