import { toIso } from '../../../core/clock.js';
import type { Project } from '../../../store/sql/projects.js';

export const projectToWire = (p: Project) => ({
  id: p.id,
  name: p.name,
  description: p.description,
  metadata: p.metadata,
  is_default: p.isDefault,
  document_count: p.documentCount,
  chunk_count: p.chunkCount,
  size_bytes: p.sizeBytes,
  created_at: toIso(p.createdAt),
  updated_at: toIso(p.updatedAt),
});
