import { html } from '../html.js';
import { layout } from './layout.js';

/** The instance's sharing policies (access/sharing.ts), in the words of the Admin page. */
const POLICIES = [
  ['anyone', 'Anyone', 'A project’s owners may share it with any account or group on this docsearch.'],
  ['groups', 'Within their groups', 'Owners may share only with the groups they belong to and the people in them.'],
  ['admins', 'Admins only', 'Only administrators share projects.'],
] as const;

export type SharingPolicyName = (typeof POLICIES)[number][0];

/** Admin → Sharing: who may share with whom. */
export function adminSharingPage(d: { user: { email: string }; csrfToken: string; policy: SharingPolicyName }) {
  return layout(
    { title: 'Sharing', user: d.user, csrfToken: d.csrfToken, active: 'admin-sharing' },
    html`<section class="card">
  <h1>Sharing</h1>
  <p>Who may share projects with whom. A change applies to the next share; what is shared already stays shared.</p>
  <form method="post" action="/admin/sharing" class="stack">
    <input type="hidden" name="_csrf" value="${d.csrfToken}">
    <fieldset><legend>Sharing policy</legend>
      ${POLICIES.map(
        ([value, label, help]) =>
          html`<label class="check"><input type="radio" name="policy" value="${value}"${value === d.policy ? html` checked` : null}> <strong>${label}</strong> — ${help}</label>`,
      )}
    </fieldset>
    <button type="submit" class="primary">Save</button>
  </form>
</section>`,
  );
}
