import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { AccessControl } from '../access/access-control.js';
import { Sharing } from '../access/sharing.js';
import { openTeamAdmin } from '../access/open-team-admin.js';
import { AccountService } from '../auth/accounts.js';
import { ApiKeyService } from '../auth/api-keys.js';
import type { RegistrationPolicy } from '../auth/oauth/metadata.js';
import { OAuthProvider } from '../auth/oauth/provider.js';
import { WebSessionService } from '../auth/web-sessions.js';
import { PasskeyService, relyingPartyOf } from '../auth/passkeys.js';
import { TwoFactorService } from '../auth/two-factor.js';
import type { TwoFactorPolicy } from '../auth/two-factor-policy.js';
import { ANALYSIS_VERSION } from '../language/analyse.js';
import { modelReach, UNREAD_NOTE } from '../language/model-reach.js';
import { AuditTrail } from '../store/audit-trail.js';
import { AuditEventStore } from '../store/sql/audit-events.js';
import { PasskeyStore } from '../store/sql/passkeys.js';
import { TwoFactorStore } from '../store/sql/two-factor.js';
import { openSecretsKey } from './secrets-key.js';
import { type Clock, systemClock } from '../core/clock.js';
import { ForegroundGate } from '../core/foreground.js';
import { tightenFolder } from '../core/private-files.js';
import { VERSION } from '../core/version.js';
import { blockedPortText, isFetchBlockedPort } from '../core/fetch-blocked-ports.js';
import { DocumentService } from '../documents/lifecycle.js';
import { LabelService } from '../documents/labels.js';
import { createExtractor } from '../ingest/extract.js';
import { OcrEngine, type OcrEngineChoice, type OcrEngineState } from '../ingest/ocr/engine.js';
import { resolveOcrLanguages, unpackagedLanguages } from '../ingest/ocr/languages.js';
import { describeLibreOffice, type LibreOffice, probeLibreOffice } from '../ingest/office/libreoffice.js';
import { probeTesseract } from '../ingest/ocr/native.js';
import { ChunkBackfill, type ChunkDeriver } from '../ingest/backfill.js';
import { documentFieldsDeriver } from '../ingest/filter-fields.js';
import { languageDeriver } from '../ingest/language-backfill.js';
import { Reindexer } from '../ingest/reindex.js';
import { unitsDeriver } from '../ingest/unit-vectors.js';
import { IngestWorker } from '../ingest/worker.js';
import { openSearch } from '../search/open.js';
import { createEmbedder } from '../models/registry.js';
import { freeBytes, LOW_SPACE_BYTES, SpaceReserve } from '../store/disk-space.js';
import { holdLibrary } from '../store/library-lock.js';
import { unfinishedMigration } from '../store/sql/library-copy.js';
import { ChunkIndex } from '../store/lancedb/chunks.js';
import { ApiKeyStore } from '../store/sql/api-keys.js';
import { DocumentStore } from '../store/sql/documents.js';
import { openDatabase } from '../store/sql/open-database.js';
import { JobStore } from '../store/sql/jobs.js';
import { LoginAttemptStore } from '../store/sql/login-attempts.js';
import { openOAuthStores } from '../store/sql/oauth-transaction.js';
import { GroupStore } from '../store/sql/groups.js';
import { ProjectMemberStore } from '../store/sql/project-members.js';
import { ProjectStore } from '../store/sql/projects.js';
import { LabelStore } from '../store/sql/labels.js';
import { SavedSearchStore } from '../store/sql/saved-searches.js';
import { FilterLookups } from '../store/sql/document-filters.js';
import { SessionStore } from '../store/sql/sessions.js';
import { SettingsStore } from '../store/sql/settings.js';
import { SetupTokenStore } from '../store/sql/setup-tokens.js';
import { UserStore } from '../store/sql/users.js';
import { maxRequestBytes } from './api/documents/multipart.js';
import { UPLOAD_FIELDS } from './api/upload.js';
import { createApp } from './app.js';
import { redactConfig, type ServeConfig } from './config.js';
import { lockDataDir, recordDaemonUrl } from './data-dir-lock.js';
import { REMOTE_PROBE_REUSE_MS, reusedFor, sharedProbe } from './health.js';
import { serveHttp } from './http-server.js';
import { createLogger, type Logger, type LogStyle } from '../core/logger.js';
import { describeAccess, metricsAccess } from './metrics/access.js';
import { timedOcr, timedPassages } from './metrics/instrument.js';
import { DaemonMetrics } from './metrics/metrics.js';
import { oauthRouters } from './oauth/index.js';
import { apiRoutes } from './routes.js';
import type { Services } from './services.js';
import { ThumbnailRenderer } from '../pdf/thumbnail.js';
import { openStorage } from './storage.js';
import { Reach } from '../sources/reach.js';
import { SourceScheduler } from '../sources/scheduler.js';
import { SourceService } from '../sources/service.js';
import { SourceStore } from '../store/sql/sources.js';
import { legacyOffice } from './api/documents/multipart.js';
import { sourceRoots } from './config.js';
import { openSso } from './sso.js';
import { sourceAlerts } from './source-alerts.js';
import { NoticeStore } from '../store/sql/notices.js';
import { scheduleTrashPurge } from '../documents/trash-purge.js';
import { Mailer } from '../mail/mailer.js';
import { OutboxSender } from '../mail/outbox-sender.js';
import { defaultFrom } from '../mail/from.js';
import { smtpTransport } from '../mail/smtp-transport.js';
import { MailOutboxStore } from '../store/sql/mail-outbox.js';
import { KnownDeviceStore } from '../store/sql/known-devices.js';
import { Quotas } from '../documents/quotas.js';
import { QuotaStore } from '../store/sql/quotas.js';
import { parseByteSize } from '../core/bytes.js';

export interface DaemonOptions {
  config: ServeConfig;
  /** Where operator notices go (the bound address, the setup link). */
  notices: NodeJS.WritableStream;
  /** The logs' form (`--log-format`, auto resolved by whoever knows the terminal); default JSON. */
  logStyle?: LogStyle;
  logger?: Logger;
  now?: Clock;
  /** Where the AWS_* variables of `--storage s3://…` are read (default: process.env). */
  env?: NodeJS.ProcessEnv;
}

export interface RunningDaemon {
  url: string;
  services: Services;
  /** Stops accepting, lets in-flight requests finish (up to graceMs), stops workers, closes stores. */
  close(graceMs?: number): Promise<void>;
}

const HOUR = 3600_000;
/** How long sent and failed mail stays listed in the outbox (the audit log keeps that it was sent). */
const OUTBOX_KEEP_MS = 30 * 24 * HOUR;

export async function startDaemon(opts: DaemonOptions): Promise<RunningDaemon> {
  const { config } = opts;
  const now = opts.now ?? systemClock;
  const logStyle = opts.logStyle ?? { format: 'json' };
  const log = opts.logger ?? createLogger(config.logLevel, undefined, logStyle);
  // Settings are checked before the data directory is touched.
  if (config.ocr === 'native') await probeTesseract('tesseract').catch((err: Error) => Promise.reject(new Error(`--ocr native: ${err.message}`)));
  // A language without its npm data package may be installed for the system's Tesseract (Debian: tesseract-ocr-deu).
  const systemData = config.ocr !== 'off' && unpackagedLanguages(config.ocrLanguages).length > 0 ? (await probeTesseract('tesseract').catch(() => undefined))?.system : undefined;
  let ocrLanguages;
  try {
    ocrLanguages = config.ocr === 'off' ? undefined : resolveOcrLanguages(config.ocrLanguages, undefined, systemData);
  } catch (err) {
    throw new Error(`--ocr-languages: ${(err as Error).message}`);
  }
  // Looked for while the stores open; the extractor and uploads need the answer.
  const libreOfficeFound = config.libreoffice === 'off' ? Promise.resolve(undefined) : findLibreOffice(log);
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  // A data directory an earlier release (or another tool) made readable by others is narrowed: what lies under a
  // 0700 folder is out of their reach, whatever its own mode.
  const widened = tightenFolder(config.dataDir);
  if (widened !== null) {
    log.warn({ event: 'data_dir.tightened', dataDir: config.dataDir, mode: `0${widened.toString(8)}` }, `the data directory was readable by other users (mode 0${widened.toString(8)}): it is now 0700`);
  }
  // On a full disk even taking the lock needs a few bytes (SQLite's journal): the reserve is given back first.
  const reserve = new SpaceReserve(config.dataDir);
  const reserveReleased = await reserve.releaseIfFull();
  const unlock = lockDataDir(config.dataDir);
  const cleanups: (() => Promise<void> | void)[] = [unlock];
  const cleanup = async () => {
    for (const fn of cleanups.reverse()) await fn();
  };

  try {
    if (reserveReleased) log.warn({ event: 'disk.full' }, 'the disk is full: released the space reserve so the daemon can start');
    else await reserve.replenish();
    const database = await openDatabase({ url: config.database, dataDir: config.dataDir, log });
    cleanups.push(() => database.close());
    if (database.shared) {
      const hold = await holdLibrary(database.locks, log);
      cleanups.push(() => hold.release());
    }
    const migrating = await unfinishedMigration(database.db);
    if (migrating) throw new Error(`this library is still being copied in from ${migrating.from}: run that \`docsearch ${migrating.command}\` again to finish it`);
    const { db, locks, events } = database;
    // Read before anything else starts: a key file that cannot be used stops the daemon, saying why.
    const storage = await openStorage(config, opts.env ?? process.env, { locks, events, log });
    cleanups.push(() => storage.close());
    const { vectors, files } = storage;
    // Searches run in the foreground: passage batches, chunk commits and index upkeep wait for a gap between them.
    const foreground = new ForegroundGate();
    const embedder = createEmbedder({ ...config, background: foreground, onModelRun: (lane, texts) => metrics.modelRan(lane, texts) });
    cleanups.push(() => embedder.close());
    const chunks = await ChunkIndex.open(vectors, { embedderId: embedder.id, dimension: () => embedder.dimension, keywordAnalysis: ANALYSIS_VERSION }, { log, background: foreground });
    cleanups.push(() => chunks.close());
    // Searches work while the indexes load, only slower: health says when the preload (and the sweep after it) is over.
    let preload: 'running' | 'done' | 'failed' = 'running';
    const preloadStarted = performance.now();
    const prewarmed = chunks.prewarm().then(
      () => {
        log.info({ ms: Math.round(performance.now() - preloadStarted) }, 'search indexes preloaded');
        return true;
      },
      (err: unknown) => {
        log.warn({ err }, 'could not preload the chunk indexes; the first searches will load them');
        return false;
      },
    );
    // Shared mode: this replica's uploads are queued as its own, which its claims prefer (it keeps their originals).
    const jobs = new JobStore(db, now, database.shared ? { origin: `r_${randomBytes(6).toString('hex')}` } : {});
    const documents = new DocumentStore(db, jobs, now);
    // This replica's own numbers (shared mode: Prometheus scrapes each replica; nothing is summed across them here).
    const upkeep = vectors.shared?.upkeep;
    const metrics = new DaemonMetrics(
      {
        queue: async () => ({ states: await jobs.queueStats() }),
        index: async () => {
          const state = await chunks.indexState();
          return { version: state?.version ?? null, unindexed: state?.unindexed ?? null, rowsInMemory: state?.rowsInMemory ?? 0 };
        },
        upkeepLeader: upkeep ? () => upkeep.isLeader() : () => true,
        sources: () => sourceStore.stats(),
        backfill: (): Record<string, { pending: number | null }> => backfill.status().derivers,
        now,
        log,
      },
      { version: VERSION, database: database.engine, storage: vectors.engine, embedder: embedder.id },
    );
    const libreOffice = await libreOfficeFound;
    const extractor = createExtractor({ timeoutMs: config.parseTimeout * 1000, ...(libreOffice ? { libreOffice } : {}) });
    cleanups.push(() => extractor.close());
    const ocr = ocrLanguages
      ? new OcrEngine({ languages: ocrLanguages, engine: config.ocr as OcrEngineChoice, concurrency: config.ocrThreads, background: foreground, onState: (state) => logOcr(log, state) })
      : undefined;
    if (ocr) cleanups.push(() => ocr.close());

    const projects = new ProjectStore(db, now);
    const labels = new LabelStore(db, now);
    const sourceStore = new SourceStore(db, now);
    const attempts = new LoginAttemptStore(db, now);
    const users = new UserStore(db, now);
    const auditEvents = new AuditEventStore(db);
    const audit = new AuditTrail({ store: auditEvents, users, log, now });
    const settings = new SettingsStore(db);
    const twoFactorStore = new TwoFactorStore(db, now);
    // One key seals every secret the server reads back: authenticator apps' seeds, sources' credentials and the
    // bodies of mail not sent yet. (Web sessions' sealed values are a session's own: a new key ends what they hold.)
    const outbox = new MailOutboxStore(db, now);
    const sealed = { anySealed: async () => (await twoFactorStore.anySealed()) || (await sourceStore.anySealed()) || (await outbox.anySealed()) };
    const sealer = await openSecretsKey(config, { settings, sealed, ...(storage.shared ? { sharedStore: storage.shared } : {}), log });
    const passkeyStore = new PasskeyStore(db, now);
    const accounts = new AccountService(users, projects, new SetupTokenStore(db, now), attempts);
    const apiKeyStore = new ApiKeyStore(db, now);
    const apiKeys = new ApiKeyService(apiKeyStore, now, audit);
    const sessionStore = new SessionStore(db, now);
    const webSessions = new WebSessionService(sessionStore);
    const members = new ProjectMemberStore(db, now);
    const groups = new GroupStore(db, now);
    const access = new AccessControl({ grants: members, projects, documents, users });
    const sharing = new Sharing({ access, members, projects, users, groups, settings, audit });
    let publicUrl = config.publicUrl?.replace(/\/+$/, '') ?? '';
    const mailer = new Mailer({ db, enabled: config.smtpUrl !== undefined, sealer, events, now, publicUrl: () => publicUrl });
    const teamAdmin = openTeamAdmin(db, now, audit, mailer);
    const twoFactor = new TwoFactorService({
      store: twoFactorStore,
      passkeys: passkeyStore,
      users,
      attempts,
      sealer,
      policy: config.require2fa as TwoFactorPolicy,
      issuer: () => `docsearch (${hostOf(publicUrl)})`,
      now,
    });
    const passkeys = new PasskeyService({ store: passkeyStore, users });
    const oauth = new OAuthProvider(openOAuthStores(db, now), now, {
      publicUrl: () => publicUrl,
      registration: config.clientRegistration as RegistrationPolicy,
      metadataAllowPrivate: config.clientMetadataAllowPrivate,
      attempts,
      audit,
      log,
    });
    const reindex = new Reindexer({ chunks, embedder, documents, locks, log, now, onSwitched: () => backfill.nudge() });
    const search = await openSearch({
      models: {
        embedder: config.embedder,
        reranker: config.reranker,
        modelCacheDir: config.modelCacheDir,
        ollamaHost: config.ollamaHost,
        openaiBaseUrl: config.openaiBaseUrl,
        ...(config.rerankerApiKey ? { rerankerApiKey: config.rerankerApiKey } : {}),
        ...(config.modelThreads !== undefined ? { modelThreads: config.modelThreads } : {}),
      },
      rerankTimeoutMs: config.rerankTimeout,
      embedder,
      vectors,
      chunks,
      documents,
      projects,
      lookups: new FilterLookups(db),
      labels,
      users,
      settings,
      log,
      foreground,
      timings: metrics.search,
    });
    cleanups.push(() => search.close());
    const worker = new IngestWorker(
      {
        jobs,
        documents,
        log,
        now,
        pipeline: { files, extractor, embedder: timedPassages(embedder, metrics), chunks: search.chunkWrites, overlapTokens: 32, ...(ocr ? { ocr: timedOcr(ocr, metrics) } : {}) },
        onSettled: (id) => ingest.settled(id),
        attachments: { acceptAttachments: (doc, files) => ingest.acceptAttachments(doc, files), removeAttachments: (doc) => ingest.removeAttachments(doc) },
        labels,
        background: foreground,
        events,
        // The store's own probe, not health's (which reuses an answer for seconds): asked only while ingestion waits for it.
        ...(storage.shared ? { storageUp: async () => (await storage.shared!.probe()).up } : {}),
        diskFree: () => freeBytes(config.dataDir),
        outcomes: metrics,
      },
      // Shared mode: replicas announce jobs through NOTIFY, so the poll is only a safety net.
      {
        concurrency: config.ingestWorkers,
        canClaim: () => !reindex.blocking,
        sharedQueue: database.shared,
        leaseMs: config.jobLease * 1000,
        heartbeatMs: (config.jobLease * 1000) / 8,
        backoffBaseMs: config.retryBase * 1000,
        ...(database.shared ? { idlePollMs: config.replicaPoll * 1000 } : {}),
      },
    );
    // Stored chunks gain what ingestion writes today in the background (ingest/backfill.ts): one deriver per concern.
    const derivers: ChunkDeriver[] = [languageDeriver({ chunks, documents }), unitsDeriver(embedder), documentFieldsDeriver({ documents, labels })];
    const backfill: ChunkBackfill = new ChunkBackfill({
      chunks,
      derivers,
      ...(database.shared ? { locks } : {}),
      background: foreground,
      busy: (): boolean => worker.running.size > 0,
      ready: () => !reindex.blocking,
      onWritten: (deriver, rows) => metrics.backfilled(deriver, rows),
      log,
    });
    for (const d of derivers) metrics.backfilled(d.name, 0);
    // Another replica's re-index switched the table: its rows are pending again.
    cleanups.push(events.subscribe('index_changed', () => backfill.nudge()));
    const thumbnails = new ThumbnailRenderer();
    cleanups.push(() => thumbnails.close());
    const quotas = new Quotas({ store: new QuotaStore(db), defaultUserBytes: config.quotaDefault === undefined ? null : parseByteSize(config.quotaDefault) });
    const savedSearches = new SavedSearchStore(db, now);
    const labelService = new LabelService({ labels, savedSearches, chunks: search.chunkWrites, locks, audit });
    const ingest = new DocumentService({
      documents,
      projects,
      files,
      chunks: search.chunkWrites,
      locks,
      events,
      now,
      audit,
      labels: labelService,
      quotas,
      trashRetentionMs: config.trashDays * 24 * HOUR,
      replacedGraceMs: config.replacedGrace * 1000,
      ...(database.shared ? { settlePollMs: (config.replicaPoll * 1000) / 6 } : {}),
    });
    cleanups.push(scheduleTrashPurge({ purge: () => ingest.purgeExpiredTrash(), leader: upkeep ? () => upkeep.isLeader() : () => true, everyMs: HOUR, log }));
    const swept = await ingest.sweepOriginals(storage.orphanMinAgeMs);
    if (swept.temp + swept.orphans > 0) log.info({ event: 'files.swept', ...swept }, 'removed interrupted uploads and unreferenced originals');
    // After the preload, whose row directory names the chunks' documents, and before health calls it done: the sweep
    // is startup work, not a cost of the first searches. Searches never show these rows anyway.
    void prewarmed.then(async (loaded) => {
      const started = performance.now();
      await ingest.sweepOrphanRows().then(
        (documents) => {
          if (documents > 0) log.info({ event: 'index.orphans_swept', documents, ms: Math.round(performance.now() - started) }, 'removed index rows of deleted documents');
        },
        (err: unknown) => log.warn({ err }, 'could not sweep index rows of deleted documents; the next start tries again'),
      );
      preload = loaded ? 'done' : 'failed';
      // After the preload: its first counts read the same columns.
      if (config.backfill === 'on') backfill.start();
      else void backfill.countOnly();
    });

    const notices = new NoticeStore(db, now);
    const roots = sourceRoots(config);
    // What no folder source may read, whatever --source-roots allows.
    const hidden = [config.dataDir, ...(config.secretsKeyFile ? [config.secretsKeyFile] : [])];
    const reach = new Reach(config.sourcesAllowPrivate, config.sourceTimeout * 1000);
    // Known before listening when given (a pass may run before): no source may read the daemon itself.
    reach.ownServer({ host: config.host, port: config.port, publicUrl: config.publicUrl ?? null });
    const sources = new SourceService({ store: sourceStore, documents, ingest, events, sealer, roots, hidden, minEveryMs: config.sourcesMinInterval * 1000, audit, reach });
    const scheduler = new SourceScheduler({
      service: sources,
      store: sourceStore,
      documents,
      ingest,
      files,
      legacyOffice: legacyOffice({ config, ...(libreOffice ? { libreOffice } : {}) }),
      maxItemBytes: config.maxUploadMb * 1024 * 1024,
      guard: { percent: config.sourcesDeleteGuardPercent, count: config.sourcesDeleteGuardCount },
      now,
      locks,
      events,
      reach,
      roots,
      hidden,
      scratchRoot: join(config.dataDir, 'sources'),
      log,
      metrics: metrics.sourcesRun,
      alerts: sourceAlerts({ access, notices, projects, log, mailer }),
    });

    const sso = openSso(config, { db, now, log, audit, sealer, publicUrl: () => publicUrl });
    // Whose admin flag the provider sets at every sign-in (--sso-admin-group), marked so that it is not changed here.
    await users.markAdminsManagedBy(sso?.accounts.policy.adminGroup ? sso.name : null, sso?.providers ?? []);

    const databaseProbe = async () => ({ status: await database.probe().then(() => 'up' as const, () => 'down' as const), engine: database.engine });
    const libraryReach = reusedFor(60_000, async () => modelReach(await documents.languagesIn('all'), embedder.languages));
    const services: Services = {
      config,
      version: VERSION,
      log,
      now,
      publicUrl: () => publicUrl,
      accounts,
      access,
      sharing,
      teamAdmin,
      quotas,
      users,
      apiKeys,
      projects,
      projectRemoval: { remove: (projectId) => ingest.removeProject(projectId) },
      webSessions,
      twoFactor,
      passkeys,
      relyingParty: () => relyingPartyOf(publicUrl),
      extractor,
      audit,
      auditEvents,
      bearerResolvers: [(credential) => apiKeys.resolve(credential), oauth.resolveAccessToken],
      embedder,
      chunks,
      documents,
      labels,
      labelService,
      savedSearches,
      ingest,
      files,
      ...(libreOffice ? { libreOffice } : {}),
      ...(ocr ? { ocr: { languages: ocr.languages, installed: () => ocr.installedLanguages() } } : {}),
      reindex,
      search: search.service,
      facets: search.facets,
      thumbnails,
      metrics,
      sources,
      sso,
      notices,
      mailer,
      outbox,
      devices: new KnownDeviceStore(db, now),
      healthProbes: {
        // Never down: mail waits in the outbox while the mail server is away. Admins read what is queued and failed in
        // the admin API and Admin → Mail (health is public: no counts).
        mail: async () => ({ status: 'up', configured: mailer.enabled }),
        database: database.shared ? sharedProbe(databaseProbe, REMOTE_PROBE_REUSE_MS) : databaseProbe,
        ...storage.probes,
        // `languages`: those the model reads (null: unknown or many); `note` when most documents are in others.
        embedder: async () => {
          const st = embedder.status();
          const reach = await libraryReach();
          return {
            status: st.error && !st.loaded ? 'down' : 'up',
            loaded: st.loaded,
            id: st.id,
            dimension: st.dimension,
            languages: embedder.languages ?? null,
            ...(reach.mostlyUnread ? { note: UNREAD_NOTE } : {}),
          };
        },
        // Down while the loops fail outside any document and retry (the log's `ingest.worker_failing` says why).
        queue: async () => {
          const failing = worker.failingSince();
          if (failing !== undefined) return { status: 'down', error: `ingestion fails and retries since ${new Date(failing).toISOString()} (see the log: ingest.worker_failing)` };
          return { status: worker.alive() ? 'up' : 'down' };
        },
        storage: async () => {
          const free = await freeBytes(config.dataDir);
          if (worker.outOfSpace() || free < LOW_SPACE_BYTES) return { status: 'down', error: 'out of disk space' };
          void reserve.replenish();
          return { status: 'up' };
        },
        reranker: search.probe,
        // Up while loading (searches are served); `preload` is for whoever wants to know they are at full speed.
        // `keyword`: the column keyword search reads — `search_text` (the release's English analysis) until an upgraded
        // library's chunks are all re-analysed in their languages (the `language` backfill), `keyword_text` from then.
        search_index: async () => ({ status: 'up', preload, keyword: chunks.keywordColumn() }),
        // Never down: searches work throughout; this says how far stored chunks are from what ingestion writes today.
        backfill: async () => ({ status: 'up', ...backfill.status() }),
        // Never down: without it legacy Office files are refused at upload, everything else works.
        legacy_office: async () => ({ status: 'up', converter: libreOffice ? describeLibreOffice(libreOffice) : null, ...(libreOffice ? {} : { reason: config.libreoffice === 'off' ? 'off (--libreoffice off)' : 'LibreOffice is not installed' }) }),
      },
    };

    // Load the model in the background: health reports it, and the first job waits for it.
    embedder.init().catch((err: unknown) => log.error({ err }, 'embedder failed to load'));
    await worker.start();
    // Cleanups run in reverse: the worker stops before the extractor, the embedder and the stores close.
    // Closing the extractor and OCR at once ends a parse or a page in progress (its document is handed back, to be
    // read again at the next start), so the stop does not wait for it: a page may take minutes to draw.
    cleanups.push(() => Promise.all([worker.stop(), reindex.stop(), backfill.stop(), extractor.close(), ocr?.close()]).then(() => undefined));
    // Sources stop first (cleanups run in reverse): a pass ends at its next item, before the workers and stores close.
    await scheduler.start();
    cleanups.push(async () => {
      await scheduler.stop();
      reach.close();
    });

    // Made before listening, so that the link is printed together with the address (a database round trip later
    // would leave anyone reading the notices unsure whether a link is coming).
    const setupToken = await accounts.newSetupToken();
    // A person reading text logs needs the setup link above them: until an account exists, a request line each
    // time their browser loads something would push it out of sight. Failures are still said.
    const quietUntilSetup = setupToken && logStyle.format === 'text' ? untilAnAccount(accounts) : undefined;
    const app = createApp(services, {
      routes: apiRoutes(services),
      extraRouters: [oauthRouters(oauth)],
      ...(quietUntilSetup ? { quietRequests: async (ctx: { status: number }) => ctx.status < 500 && (await quietUntilSetup()) } : {}),
    });
    const http = serveHttp(app.callback(), { maxBodyBytes: maxRequestBytes({ maxFileBytes: config.maxUploadMb * 1024 * 1024, maxFiles: config.maxFiles, fields: UPLOAD_FIELDS }) });
    const server = http.server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const boundUrl = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${address.port}`;
    publicUrl ||= boundUrl;
    reach.ownServer({ host: address.address, port: address.port, publicUrl });
    // Operator commands on this data directory print links that must reach this daemon (`users invite`).
    recordDaemonUrl(config.dataDir, publicUrl);
    if (config.smtpUrl) {
      const sender = new OutboxSender({ store: outbox, mailer, transport: smtpTransport(config.smtpUrl, config.smtpFrom ?? defaultFrom(publicUrl)), locks, events, audit, log, now });
      sender.start();
      cleanups.push(() => sender.stop());
    }

    // Expired sessions and tokens, stale sign-in attempts, old outbox mail and audit events: once now, then hourly
    // (a daemon restarted more often than hourly would otherwise never purge). The stores close after a pass ends.
    const maintain = (): Promise<unknown> =>
      Promise.all([
        webSessions.purgeExpired().catch((err: unknown) => log.warn({ err }, 'session purge failed')),
        oauth.purgeExpired().catch((err: unknown) => log.warn({ err }, 'oauth token purge failed')),
        attempts.purgeStale(now() - 24 * HOUR).catch((err: unknown) => log.warn({ err }, 'login attempt purge failed')),
        outbox.purgeBefore(now() - OUTBOX_KEEP_MS).catch((err: unknown) => log.warn({ err }, 'mail outbox purge failed')),
        config.auditRetentionDays > 0 ? auditEvents.purgeBefore(now() - config.auditRetentionDays * 24 * HOUR).catch((err: unknown) => log.warn({ err }, 'audit log purge failed')) : undefined,
      ]);
    let purging = maintain();
    const maintenance = setInterval(() => (purging = maintain()), HOUR);
    maintenance.unref();
    cleanups.push(async () => {
      clearInterval(maintenance);
      await purging;
    });

    // `ingest_owner` is what the jobs this process leases carry as lease_owner (which replica holds which job).
    log.info({ url: boundUrl, dataDir: config.dataDir, database: database.location, version: VERSION, ingest_owner: worker.owner, config: redactConfig(config), metrics: describeAccess(metricsAccess(config)) }, 'listening');
    // Not refused: behind a proxy the port is nobody's business but the proxy's (which does not block it).
    const blockedPort = isFetchBlockedPort(address.port) ? blockedPortText(address.port) : undefined;
    if (blockedPort) log.warn({ event: 'serve.port_blocked', port: address.port }, blockedPort);
    opts.notices.write(
      `docsearch ${VERSION} listening on ${boundUrl}\n` +
        (blockedPort ? `warning: ${blockedPort}\n` : '') +
        (setupToken
          ? `No account exists yet. Open this one-time link to create the first one:\n  ${publicUrl}/setup?token=${setupToken}\n` +
            `(or run: docsearch users add <email> ${database.shared ? 'with the same DOCSEARCH_DATABASE_URL' : `--data-dir ${config.dataDir}`})\n` +
            (quietUntilSetup ? 'Until then, only requests that fail are logged here.\n' : '')
          : ''),
    );

    let closing: Promise<void> | undefined;
    return {
      url: boundUrl,
      services,
      close(graceMs = 10_000) {
        closing ??= (async () => {
          log.info('shutting down');
          // Waiting uploads answer now with what they have; then the requests in flight finish.
          ingest.stopWaiting();
          await http.drain(graceMs, log);
          // Only then the workers (their native calls finish first), then the stores, in reverse order of opening.
          await cleanup();
          log.info('stopped');
          log.flush?.();
        })();
        return closing;
      },
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/**
 * Whether the library still has no account: asked of the database while it has none (another process may add one:
 * `docsearch users add`, a replica's setup page), never again once it has.
 */
function untilAnAccount(accounts: { hasUsers(): Promise<boolean> }): () => Promise<boolean> {
  let none = true;
  // A database that cannot answer changes nothing here: the requests it fails are logged as failures anyway.
  return async () => (none &&= !(await accounts.hasUsers().catch(() => false)));
}

/** The host a URL names, for labels ("docsearch (search.example.com)"). */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** The OCR engine's loads, fallbacks and releases as events (docs/events.md). */
function logOcr(log: Logger, state: OcrEngineState): void {
  if (state.event === 'loaded') {
    const why = state.nativeUnusable ? `: native Tesseract is not usable (${state.nativeUnusable})` : '';
    log.info({ event: 'ocr.loaded', engine: state.engine, ...(state.nativeUnusable ? { native_unusable: state.nativeUnusable } : {}) }, `OCR reads with ${state.engine}${why}`);
  } else if (state.event === 'fallback') {
    log.warn({ event: 'ocr.fallback', engine: state.engine, reason: state.reason }, `OCR goes on with ${state.engine}: ${state.reason}`);
  } else {
    log.info({ event: 'ocr.released' }, 'OCR released its threads and data after being idle');
  }
}

/** LibreOffice for legacy Office files, if it is installed: like native Tesseract, used when found at start. */
async function findLibreOffice(log: Logger): Promise<LibreOffice | undefined> {
  try {
    const office = await probeLibreOffice();
    log.info({ event: 'libreoffice.found', version: office.version, network_isolated: office.isolate.length > 0 }, `legacy .doc, .xls and .ppt are converted with ${describeLibreOffice(office)}${office.isolate.length ? '' : ' (without network isolation: unshare -rn is not allowed here)'}`);
    return office;
  } catch (err) {
    log.info({ event: 'libreoffice.missing', reason: (err as Error).message }, 'legacy .doc, .xls and .ppt are refused: LibreOffice is not installed');
    return undefined;
  }
}
