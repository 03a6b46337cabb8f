// The signed-in page (`/`): who is signed in, or a link to sign in.
import { esc } from '../../shared/pages.ts';
import { layout } from './layout.ts';

export function homePage(rpName: string, identity: string | undefined): string {
  if (identity === undefined) {
    return layout(
      { title: 'Welcome', rpName },
      `<h1>${esc(rpName)}</h1>
<p id="signed-out" data-testid="signed-out">You are not signed in.</p>
<p><a class="button" id="sign-in" href="/login">Sign in</a></p>`,
    );
  }
  return layout(
    { title: 'Signed in', rpName },
    `<h1>${esc(rpName)}</h1>
<p id="signed-in" data-testid="signed-in">Signed in as <strong id="signed-in-identity" data-testid="signed-in-identity">${esc(identity)}</strong></p>
<form method="post" action="/logout"><button type="submit" id="sign-out">Sign out</button></form>`,
  );
}
