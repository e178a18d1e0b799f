/** The pages tour (pages-tour.ts) at 1280 px. */
import { VIEWPORTS } from '../helpers/browser.ts';
import { pagesTour } from './pages-tour.ts';

pagesTour([VIEWPORTS[0]]);
