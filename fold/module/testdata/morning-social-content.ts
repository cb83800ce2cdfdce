export function fold(view: View, event: Event): View {
  const fieldOf = (value: Json | undefined, name: string): Json | undefined =>
    typeof value === 'object' && value !== null && !Array.isArray(value) ? value[name] : undefined;
  const posts = fieldOf(fieldOf(event.data, 'output'), 'posts');
  const channels = (Array.isArray(posts) ? posts : []).slice(0, 50).map((post) => {
    const channel = fieldOf(post, 'channel');
    return typeof channel === 'string' && channel !== '' ? channel.slice(0, 64) : 'Other';
  });
  const time = event.time?.slice(0, 10);
  if (time === undefined || channels.length === 0) return view;
  const points = view.posts_per_day?.lines[0]?.points ?? [];
  const last = points.at(-1);
  const day = last !== undefined && last.at > time ? last.at : time;
  const since = new Date(new Date(day).getTime() - 29 * 86_400_000).toISOString().slice(0, 10);
  const days = last?.at === day
    ? [...points.slice(0, -1), { at: day, value: last.value + channels.length }]
    : [...points, { at: day, value: channels.length }];
  const counts = new Map((view.by_channel?.values ?? []).map(({ name, value }) => [name, value]));
  for (const channel of channels) counts.set(channel, (counts.get(channel) ?? 0) + 1);
  return {
    posts_per_day: { unit: 'posts', period: 'day', lines: [{ name: 'Posts', points: days.filter(({ at }) => at >= since) }] },
    by_channel: {
      unit: 'posts',
      values: [...counts].toSorted(([, one], [, other]) => other - one).slice(0, 200).map(([name, value]) => ({ name, value })),
    },
  };
}
