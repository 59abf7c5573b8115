/**
 * What deleting a group takes away, in the words every surface asks with before it deletes (web, `docsearch groups
 * delete`, `docsearch admin groups delete`): how many members lose what, and how many projects were shared with it.
 */
export interface GroupReach {
  members: number;
  projects: number;
}

const count = (n: number, one: string): string => `${n} ${n === 1 ? one : `${one}s`}`;

export function groupDeletionConsequence(r: GroupReach): string {
  const shared = r.projects === 0 ? 'is shared with no project' : `is shared with ${count(r.projects, 'project')}`;
  return `The group has ${count(r.members, 'member')} and ${shared}: its members lose what it was given; what was shared with them directly stays.`;
}
