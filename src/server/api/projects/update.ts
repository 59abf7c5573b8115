import { z } from 'zod';
import { conflict, notFound } from '../../../core/errors.js';
import type { Services } from '../../services.js';
import { defineRoute } from '../route.js';
import { ErrorBody, IdParams, Project } from '../schemas.js';
import { languagePatch, ProjectDescription, ProjectLanguageSettings, ProjectMetadata, ProjectName } from './fields.js';
import { oneProjectToWire } from './wire.js';
import { nothingToChange } from '../nothing-to-change.js';

export const updateProject = (s: Services) =>
  defineRoute({
    name: 'projects.update',
    method: 'PATCH',
    path: '/projects/:id',
    scope: 'write:documents',
    tag: 'projects',
    summary:
      'Rename a project or change its description, metadata (replaced whole), or the language and OCR languages its uploads get from now on (null: detected / the server\'s --ocr-languages). Owners only.',
    params: IdParams,
    body: z.strictObject({
      name: ProjectName.optional(),
      description: ProjectDescription.optional(),
      metadata: ProjectMetadata.optional(),
      ...ProjectLanguageSettings,
    }),
    responses: {
      200: { description: 'Updated', schema: Project },
      400: { description: 'Invalid body', schema: ErrorBody },
      403: { description: 'Not an owner of the project', schema: ErrorBody },
      404: { description: 'Not found', schema: ErrorBody },
      409: { description: 'Name taken', schema: ErrorBody },
    },
    async handler({ params, body, principal }) {
      if (Object.keys(body).length === 0) throw nothingToChange('name, description, metadata, language or ocr_languages');
      await s.access.check(principal, params.id, 'manage');
      const { language, ocr_languages, ...rest } = body;
      const result = await s.projects.update(params.id, { ...rest, ...languagePatch({ language, ocr_languages }) });
      if (result === 'conflict') throw conflict(`its owner already has a project named "${body.name}"`);
      if (!result) throw notFound('project');
      return { status: 200, body: await oneProjectToWire(s, principal, result) };
    },
  });
