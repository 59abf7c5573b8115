/**
 * The stores behind sharing, on both engines: a user's grants (owner of record, their own rows, their groups'
 * rows), groups and their members, and what access/ makes of the grants (the highest role, a key's project limit).
 */
import { expect, it } from 'vitest';
import { effectiveRoles } from '../../src/access/access-control.js';
import { GroupStore } from '../../src/store/sql/groups.js';
import { ProjectMemberStore } from '../../src/store/sql/project-members.js';
import { ProjectStore } from '../../src/store/sql/projects.js';
import { UserStore } from '../../src/store/sql/users.js';
import { describeEachEngine } from '../helpers/store-dialects.js';

const now = () => Date.UTC(2026, 10, 26);

describeEachEngine('sharing', (suite) => {
  it("gathers a user's grants from ownership, their own rows and their groups, and keeps the highest", async () => {
    const { db } = suite.handle();
    const users = new UserStore(db, now);
    const projects = new ProjectStore(db, now);
    const members = new ProjectMemberStore(db, now);
    const groups = new GroupStore(db, now);
    const alice = (await users.create('alice-share@example.com', 'h'))!;
    const bob = (await users.create('bob-share@example.com', 'h'))!;
    const handbook = (await projects.create(alice.id, { name: 'handbook' }))!;
    const budget = (await projects.create(alice.id, { name: 'budget' }))!;
    const secret = (await projects.create(alice.id, { name: 'secret' }))!;
    const team = (await groups.create('Team'))!;
    expect(await groups.create('team')).toBeNull(); // names ignore ASCII case
    expect(await groups.addMember(team.id, bob.id)).toBe(true);
    expect(await groups.addMember(team.id, bob.id)).toBe(false);

    expect(await members.upsert(handbook.id, { id: team.id, kind: 'group' }, 'viewer', alice.id)).toBe('created');
    expect(await members.upsert(handbook.id, { id: bob.id, kind: 'user' }, 'editor', alice.id)).toBe('created');
    expect(await members.upsert(budget.id, { id: team.id, kind: 'group' }, 'editor', alice.id)).toBe('created');
    expect(await members.upsert(budget.id, { id: team.id, kind: 'group' }, 'owner', alice.id)).toBe('updated');
    // The higher grant is the user's own on handbook and the group's on plans, given second on both and first on
    // minutes: the highest wins whatever order the grants come in (a first-one-wins mutation passed handbook alone).
    const plans = (await projects.create(alice.id, { name: 'plans' }))!;
    const minutes = (await projects.create(alice.id, { name: 'minutes' }))!;
    expect(await members.upsert(plans.id, { id: bob.id, kind: 'user' }, 'viewer', alice.id)).toBe('created');
    expect(await members.upsert(plans.id, { id: team.id, kind: 'group' }, 'editor', alice.id)).toBe('created');
    expect(await members.upsert(minutes.id, { id: team.id, kind: 'group' }, 'editor', alice.id)).toBe('created');
    expect(await members.upsert(minutes.id, { id: bob.id, kind: 'user' }, 'viewer', alice.id)).toBe('created');

    const bobs = effectiveRoles(await members.grantsOf(bob.id), null);
    expect(Object.fromEntries(bobs)).toEqual({ [handbook.id]: 'editor', [budget.id]: 'owner', [plans.id]: 'editor', [minutes.id]: 'editor' });
    expect(bobs.has(secret.id)).toBe(false);
    const alices = effectiveRoles(await members.grantsOf(alice.id), null);
    expect(Object.fromEntries(alices)).toEqual({ [handbook.id]: 'owner', [budget.id]: 'owner', [secret.id]: 'owner', [plans.id]: 'owner', [minutes.id]: 'owner' });
    // A key limited to one project sees that one only, and an empty limit nothing.
    expect([...effectiveRoles(await members.grantsOf(bob.id), [budget.id]).keys()]).toEqual([budget.id]);
    expect(effectiveRoles(await members.grantsOf(bob.id), []).size).toBe(0);

    expect((await members.list(handbook.id)).map((m) => [m.kind, m.label, m.role])).toEqual([
      ['group', 'Team', 'viewer'],
      ['user', 'bob-share@example.com', 'editor'],
    ]);
    expect(await groups.groupsOf(bob.id)).toMatchObject([{ name: 'Team', memberCount: 1 }]);

    // Leaving the group takes its grants away at the next read; the direct grant stays.
    expect(await groups.removeMember(team.id, bob.id)).toBe(true);
    expect(Object.fromEntries(effectiveRoles(await members.grantsOf(bob.id), null))).toEqual({ [handbook.id]: 'editor', [plans.id]: 'viewer', [minutes.id]: 'viewer' });
    // A deleted group's rows go with removeEverywhere; a deleted project's with the project.
    await members.removeEverywhere(team.id);
    expect(await groups.delete(team.id)).toBe(true);
    expect((await members.list(budget.id)).length).toBe(0);
    for (const p of [handbook, plans, minutes]) expect(await projects.delete(p.id)).toBe(true);
    expect(await members.grantsOf(bob.id)).toEqual([]);
  });
});
