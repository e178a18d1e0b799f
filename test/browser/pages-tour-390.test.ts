/** The pages tour (pages-tour.ts) at 390 px. */
import { VIEWPORTS } from '../helpers/browser.ts';
import { pagesTour } from './pages-tour.ts';

pagesTour([VIEWPORTS[1]]);
