import { InvalidArgumentError } from 'commander';
import { labelNameProblem, MAX_FILTER_VALUES } from '../../core/label-name.js';
import { LANGUAGE_SETTING, OCR_LANGUAGES_SETTING } from '../../core/language-settings.js';

/*
 * upload's --language, --ocr-languages and --label, checked as they are parsed: the server refuses a bad value for
 * the whole request, and each batch would be sent, refused and then re-sent file by file before the run said why.
 * The rules are the server's (core/language-settings.ts, core/label-name.ts).
 */

export function parseLanguage(value: string): string {
  const code = value.trim().toLowerCase();
  if (code !== '' && !LANGUAGE_SETTING.test(code)) throw new InvalidArgumentError('--language takes an ISO 639-1 language code (such as de, zh)');
  return code;
}

export function parseOcrLanguages(value: string): string {
  const codes = value.trim();
  if (codes !== '' && !OCR_LANGUAGES_SETTING.test(codes)) throw new InvalidArgumentError('--ocr-languages takes Tesseract language codes joined by "+" (such as deu, deu+eng, chi_sim)');
  return codes;
}

/** Collects --label like `collect`, refusing a name the server would refuse, and more names than it takes. */
export function collectLabel(value: string, previous: string[] = []): string[] {
  const name = value.trim();
  const problem = labelNameProblem(name);
  if (problem) throw new InvalidArgumentError(`--label: ${problem} (one label per --label)`);
  if (previous.length >= MAX_FILTER_VALUES) throw new InvalidArgumentError(`--label: at most ${MAX_FILTER_VALUES} labels`);
  return [...previous, name];
}
