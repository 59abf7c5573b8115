import { adminCreateGroup, adminDeleteGroup, adminGetGroup, adminListGroups, adminAddGroupMember, adminRemoveGroupMember } from './api/admin/groups.js';
import { adminCreateInvitations, adminListInvitations, adminRevokeInvitation } from './api/admin/invitations.js';
import { adminListMail, adminRetryMail, adminTestMail } from './api/admin/mail.js';
import { adminUpdateProject } from './api/admin/projects.js';
import { adminDeleteUser, adminDisableUser, adminEnableUser, adminGetUser, adminListUsers, adminResetLink, adminUpdateUser } from './api/admin/users.js';
import { listAuditEvents } from './api/audit-events.js';
import { deleteDocument } from './api/documents/delete.js';
import { getDocumentFile } from './api/documents/file.js';
import { getDocument } from './api/documents/get.js';
import { listDocuments } from './api/documents/list.js';
import { retryDocument } from './api/documents/retry.js';
import { getDocumentText } from './api/documents/text.js';
import { getDocumentThumbnail } from './api/documents/thumbnail.js';
import { updateDocument } from './api/documents/update.js';
import { healthCheck } from './api/health.js';
import { createKey } from './api/keys/create.js';
import { deleteKey } from './api/keys/delete.js';
import { listKeys } from './api/keys/list.js';
import { createLabel, deleteLabel, listLabels, updateLabel } from './api/labels/routes.js';
import { createSavedSearch, deleteSavedSearch, getSavedSearch, listSavedSearches, renameSavedSearch } from './api/saved-searches.js';
import { me } from './api/me.js';
import { createProject } from './api/projects/create.js';
import { deleteProject } from './api/projects/delete.js';
import { getProject } from './api/projects/get.js';
import { listProjects } from './api/projects/list.js';
import { addMember, listMembers, removeMember, transferProject } from './api/projects/members.js';
import { updateProject } from './api/projects/update.js';
import { reindexStatus, startReindex } from './api/reindex.js';
import type { ApiRoute } from './api/route.js';
import { search } from './api/search.js';
import { createSource } from './api/sources/create.js';
import { deleteSource } from './api/sources/delete.js';
import { getSource } from './api/sources/get.js';
import { listSources } from './api/sources/list.js';
import { syncSource } from './api/sources/sync.js';
import { updateSource } from './api/sources/update.js';
import { listTrash, purgeFromTrash, restoreFromTrash } from './api/trash.js';
import { upload } from './api/upload.js';
import type { Services } from './services.js';

/**
 * The whole /api/v1 surface in one table: each entry declares its name, method, path, scope,
 * schemas and handler (see api/route.ts). The OpenAPI document is generated from this list.
 */
export function apiRoutes(s: Services): ApiRoute[] {
  return [
    healthCheck(s),
    me(s),
    listProjects(s),
    createProject(s),
    getProject(s),
    updateProject(s),
    deleteProject(s),
    listMembers(s),
    addMember(s),
    removeMember(s),
    transferProject(s),
    listLabels(s),
    createLabel(s),
    updateLabel(s),
    deleteLabel(s),
    listSavedSearches(s),
    createSavedSearch(s),
    getSavedSearch(s),
    renameSavedSearch(s),
    deleteSavedSearch(s),
    listSources(s),
    createSource(s),
    getSource(s),
    updateSource(s),
    deleteSource(s),
    syncSource(s),
    listKeys(s),
    createKey(s),
    deleteKey(s),
    upload(s),
    listDocuments(s),
    getDocument(s),
    getDocumentFile(s),
    getDocumentText(s),
    getDocumentThumbnail(s),
    updateDocument(s),
    retryDocument(s),
    deleteDocument(s),
    listTrash(s),
    restoreFromTrash(s),
    purgeFromTrash(s),
    startReindex(s),
    reindexStatus(s),
    search(s),
    listAuditEvents(s),
    adminListUsers(s),
    adminGetUser(s),
    adminUpdateUser(s),
    adminDisableUser(s),
    adminEnableUser(s),
    adminDeleteUser(s),
    adminResetLink(s),
    adminUpdateProject(s),
    adminListInvitations(s),
    adminCreateInvitations(s),
    adminRevokeInvitation(s),
    adminListGroups(s),
    adminCreateGroup(s),
    adminGetGroup(s),
    adminDeleteGroup(s),
    adminAddGroupMember(s),
    adminRemoveGroupMember(s),
    adminListMail(s),
    adminTestMail(s),
    adminRetryMail(s),
  ];
}
