/**
 * Who is told when a project's source needs someone (docs/sources.md#who-is-told): its owners and editors, directly or
 * through a group, and only live, enabled accounts: a disabled one signs in to nothing and is told nothing.
 */
import { expect, it } from 'vitest';
import { GroupStore } from '../../src/store/sql/groups.js';
import { ProjectMemberStore } from '../../src/store/sql/project-members.js';
import { ProjectStore } from '../../src/store/sql/projects.js';
import { UserStore } from '../../src/store/sql/users.js';
import { describeEachEngine } from '../helpers/store-dialects.js';

const now = () => Date.UTC(2026, 11, 2);

describeEachEngine('project holders', (suite) => {
  it("are the owners and editors, direct or through a group, live and enabled: not viewers, not a disabled account", async () => {
    const { db } = suite.handle();
    const users = new UserStore(db, now);
    const members = new ProjectMemberStore(db, now);
    const groups = new GroupStore(db, now);
    const [alice, bob, carol, dan, erin, fay] = await Promise.all(['alice', 'bob', 'carol', 'dan', 'erin', 'fay'].map(async (n) => (await users.create(`${n}-holders@example.com`, 'h'))!));
    const project = (await new ProjectStore(db, now).create(alice!.id, { name: 'moorings' }))!;
    const crew = (await groups.create('Holders crew'))!;
    for (const u of [carol!, fay!]) await groups.addMember(crew.id, u.id);
    await members.upsert(project.id, { id: bob!.id, kind: 'user' }, 'editor', alice!.id);
    await members.upsert(project.id, { id: crew.id, kind: 'group' }, 'editor', alice!.id);
    await members.upsert(project.id, { id: dan!.id, kind: 'user' }, 'viewer', alice!.id);
    await members.upsert(project.id, { id: erin!.id, kind: 'user' }, 'editor', alice!.id);
    const told = async () => (await members.holders(project.id, ['owner', 'editor'])).map((u) => u.email.split('-')[0]);
    expect(await told()).toEqual(['alice', 'bob', 'carol', 'erin', 'fay']);
    await users.setDisabled(erin!.id, now());
    await users.setDisabled(fay!.id, now());
    expect(await told()).toEqual(['alice', 'bob', 'carol']);
  });
});
